"""The workflow runner: the sandbox, with the SDK's per-payload context questions answered
outside it when the data converter has no use for the answer.

For every payload of every activation and completion (three passes each way: references,
external storage, codec) the SDK asks the workflow instance for a serialization context
and an external-store context. A sandboxed instance answers each question by compiling
and running a code string inside the sandbox with its import hooks applied: in a burst of
agent runs that was over a quarter of the worker's Python time (py-spy, issue 12).

The answer only selects which converter handles the payload: `DataConverter.with_context`
returns the converter itself when none of its parts (payload converter, codec, failure
converter, external storage) takes a context, and agentrt's payload codec reads only the
workflow id of one (`ignores_context`). For such a converter every command of the
workflow's own (its activities, its completion) gets the workflow's own context, given
without entering the sandbox. A command for another workflow (a child agent's start and
result, a signal) is bound to that workflow: the sandbox answers those, as without this
runner. With a converter that does use contexts, the sandbox answers everything.

Only public names are imported. Temporal SDK 1.35.0 exports WorkflowRunner and
WorkflowInstance from `temporalio.worker` for custom runners, but types their methods with
private ones (`temporalio.workflow._Definition`, the activation and completion messages of
`temporalio.bridge.proto`). This runner hands those objects to the sandbox untouched, so it
types them `Any` rather than import the private modules.
"""

import dataclasses
from collections.abc import Sequence
from typing import Any

from temporalio.api.enums.v1 import CommandType
from temporalio.converter import (
    ActivitySerializationContext,
    DataConverter,
    SerializationContext,
    StorageDriverStoreContext,
    StorageDriverWorkflowInfo,
    WorkflowSerializationContext,
)
from temporalio.worker import WorkflowInstance, WorkflowInstanceDetails, WorkflowRunner
from temporalio.workflow import Info

from agentrt.core.codec import EncryptionCodec

# Commands (and their resolutions) whose payloads belong to another workflow or a Nexus
# operation: a child's input and result are bound to the child, a signal's to its target.
# For these the sandbox answers, as without this runner (tests/workflows/test_child_agents.py
# runs a delegation under payload keys).
_FOR_ANOTHER = frozenset(
    {
        CommandType.COMMAND_TYPE_START_CHILD_WORKFLOW_EXECUTION,
        CommandType.COMMAND_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION,
        CommandType.COMMAND_TYPE_REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION,
        CommandType.COMMAND_TYPE_SCHEDULE_NEXUS_OPERATION,
    }
)


def _for_another(command_info: object) -> bool:
    return getattr(command_info, "command_type", None) in _FOR_ANOTHER


# A context of each kind a workflow's payloads are given; a converter that returns itself
# for both takes no context at all.
_PROBES: tuple[SerializationContext, ...] = (
    WorkflowSerializationContext(namespace="probe", workflow_id="probe"),
    ActivitySerializationContext(
        namespace="probe",
        activity_id="1",
        workflow_id="probe",
        workflow_type="probe",
        activity_type="probe",
        activity_task_queue="probe",
        is_local=False,
    ),
)


def ignores_context(converter: DataConverter) -> bool:
    """True when every command of one workflow gets the same handling from `converter`,
    whatever context the sandbox would name: no part takes a context, or the only one that
    does is agentrt's payload codec, which reads nothing of it but the workflow id (it binds
    each payload to its run, core/codec.py). An activity's context names the workflow that
    scheduled it, so the workflow's own context is the sandbox's answer for every payload
    but those of commands for another workflow, which `_ContextFree` leaves to it."""
    if converter.external_storage is not None:
        return False
    if isinstance(converter.payload_codec, EncryptionCodec):
        converter = dataclasses.replace(converter, payload_codec=None)
    return all(converter.with_context(probe) is converter for probe in _PROBES)


class _ContextFree(WorkflowInstance):
    """A sandboxed instance whose context answers are fixed for the run."""

    def __init__(self, inner: WorkflowInstance, info: Info) -> None:
        self._inner = inner
        self._context = WorkflowSerializationContext(
            namespace=info.namespace, workflow_id=info.workflow_id
        )
        self._store = StorageDriverStoreContext(
            target=StorageDriverWorkflowInfo(
                id=info.workflow_id,
                run_id=info.run_id,
                type=info.workflow_type,
                namespace=info.namespace,
            )
        )

    def activate(self, act: Any) -> Any:  # SDK 1.35.0: bridge.proto messages (private)
        return self._inner.activate(act)

    def get_serialization_context(self, command_info: Any) -> SerializationContext | None:
        if _for_another(command_info):
            return self._inner.get_serialization_context(command_info)
        return self._context

    def get_external_store_context(self, command_info: Any) -> StorageDriverStoreContext:
        if _for_another(command_info):
            return self._inner.get_external_store_context(command_info)
        return self._store

    def get_info(self) -> Info:
        return self._inner.get_info()

    def get_thread_id(self) -> int | None:
        return self._inner.get_thread_id()


class ContextFreeRunner(WorkflowRunner):
    """`inner` (the sandbox), for a worker whose data converter `ignores_context`."""

    def __init__(self, inner: WorkflowRunner) -> None:
        self.inner = inner

    def prepare_workflow(self, defn: Any) -> None:  # SDK 1.35.0: workflow._Definition (private)
        self.inner.prepare_workflow(defn)

    def create_instance(self, det: WorkflowInstanceDetails) -> WorkflowInstance:
        return _ContextFree(self.inner.create_instance(det), det.info)

    def set_worker_level_failure_exception_types(
        self, types: Sequence[type[BaseException]]
    ) -> None:
        self.inner.set_worker_level_failure_exception_types(types)
