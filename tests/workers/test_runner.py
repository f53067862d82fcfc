"""The workflow runner answers the SDK's context questions outside the sandbox only for a
data converter that takes no context; a converter that does keeps the sandbox's answers."""

import dataclasses
import types
import uuid
from collections.abc import Sequence
from pathlib import Path

from temporalio.api.common.v1 import Payload
from temporalio.api.enums.v1 import CommandType
from temporalio.client import Client
from temporalio.converter import (
    ActivitySerializationContext,
    PayloadCodec,
    SerializationContext,
    WithSerializationContext,
    WorkflowSerializationContext,
)
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

from agentrt.contracts.enums import RunStatus
from agentrt.core.temporal import data_converter
from agentrt.starter.facade import AgentRuntime
from agentrt.store.db.sealing import Sealer
from agentrt.store.runs.record import RunStore
from agentrt.workers.builder import sandbox_runner
from agentrt.workers.compose import WorkerResources
from agentrt.workers.runner import ContextFreeInstance, ContextFreeRunner, ignores_context
from agentrt.workflows.agent_run import AgentRunWorkflow


class ContextCodec(PayloadCodec, WithSerializationContext):
    """A codec that wants to know which activity a payload is for; records the context of
    every payload it encodes."""

    def __init__(
        self, seen: list[tuple[SerializationContext, bytes]], context: SerializationContext | None
    ) -> None:
        self.seen = seen
        self.context = context

    def with_context(self, context: SerializationContext) -> "ContextCodec":
        return ContextCodec(self.seen, context)

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        if self.context is not None:
            self.seen.extend((self.context, p.data) for p in payloads)
        return list(payloads)

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return list(payloads)


def test_agentrt_converters_take_no_context_so_the_runner_answers_outside_the_sandbox() -> None:
    for converter in (data_converter(), data_converter(f"k:{Sealer.new_key_b64()}")):
        assert ignores_context(converter)
        runner = sandbox_runner(converter)
        assert isinstance(runner, ContextFreeRunner)
        assert isinstance(runner.inner, SandboxedWorkflowRunner)


def test_only_a_child_agents_start_commands_another_workflow() -> None:
    """What lets the runner answer the other commands with the workflow's own context while
    the payload codec binds payloads to their run: the one command of an agentrt workflow
    for another workflow is a child agent's start (workflows/children.py), which the runner
    asks the sandbox for (below). Another such command must be added to the runner's."""
    root = Path(__file__).resolve().parents[2] / "workflows"
    other_workflows = ("external_workflow", "continue_as_new_to_other", "child_workflow")
    sources = {p.name: p.read_text() for p in root.rglob("*.py")}
    assert len(sources) > 5
    for name, text in sources.items():
        for word in other_workflows:
            if (name, word) != ("children.py", "child_workflow"):
                assert word not in text, f"workflows/{name} uses {word}"


@dataclasses.dataclass
class Asked:
    """A command's info as the SDK gives it: its type, and its sequence number."""

    command_type: int
    command_seq: int = 1


class Sandbox:
    """The inner instance: answers with the child's context, and counts the questions."""

    def __init__(self) -> None:
        self.asked: list[object] = []
        self.child = WorkflowSerializationContext(namespace="default", workflow_id="child")

    def get_serialization_context(self, command_info: object) -> SerializationContext:
        self.asked.append(command_info)
        return self.child

    def get_external_store_context(self, command_info: object) -> object:
        self.asked.append(command_info)
        return "child-store"


def test_a_child_start_gets_the_sandboxs_context_and_the_rest_the_workflows() -> None:
    """A child agent's start input is bound to the child's run, not the parent's: with
    payload keys, a parent whose child input was bound to itself made a child that no worker
    could begin (found by `agentrt demo --team`, tests/starter/test_team_demo.py)."""
    sandbox = Sandbox()
    info = types.SimpleNamespace(
        namespace="default", workflow_id="parent", run_id="r", workflow_type="AgentRun"
    )
    instance = ContextFreeInstance(sandbox, info)  # type: ignore[arg-type]
    start = Asked(CommandType.COMMAND_TYPE_START_CHILD_WORKFLOW_EXECUTION)
    assert instance.get_serialization_context(start) is sandbox.child
    assert instance.get_external_store_context(start) == "child-store"
    activity = Asked(CommandType.COMMAND_TYPE_SCHEDULE_ACTIVITY_TASK)
    own = instance.get_serialization_context(activity)
    assert isinstance(own, WorkflowSerializationContext) and own.workflow_id == "parent"
    assert instance.get_serialization_context(None) == own
    assert sandbox.asked == [start, start]  # the others never entered the sandbox


def test_a_converter_that_takes_context_keeps_the_plain_sandbox() -> None:
    converter = dataclasses.replace(data_converter(), payload_codec=ContextCodec([], None))
    assert not ignores_context(converter)
    assert isinstance(sandbox_runner(converter), SandboxedWorkflowRunner)
    assert isinstance(sandbox_runner(), SandboxedWorkflowRunner)  # no converter: no shortcut


async def test_a_context_codec_still_gets_each_activitys_context(
    temporal_env: WorkflowEnvironment, parts: WorkerResources
) -> None:
    """End to end with a real worker: the runner falls back to the sandbox's answers, so a
    codec that encrypts per activity (say) is told the activity of every payload."""
    seen: list[tuple[SerializationContext, bytes]] = []
    converter = dataclasses.replace(data_converter(), payload_codec=ContextCodec(seen, None))
    client = await Client.connect(
        temporal_env.client.service_client.config.target_host,
        namespace=temporal_env.client.namespace,
        data_converter=converter,
    )
    queue = f"tq-{uuid.uuid4().hex[:10]}"
    runtime = AgentRuntime(client, RunStore(parts.ctx), queue)
    async with Worker(
        client,
        task_queue=queue,
        workflows=[AgentRunWorkflow],
        activities=parts.activities,
        activity_executor=parts.executor,
        workflow_runner=sandbox_runner(converter),
    ):
        view = await runtime.run("auto", "Please refund order 1042")
    assert view.status is RunStatus.COMPLETED
    # A model call's input is encoded by the workflow worker alone (the activity worker
    # encodes its result): that is where the sandbox's answer is needed.
    inputs = [c for c, data in seen if b'"offer_tools"' in data]
    assert inputs
    assert all(
        isinstance(c, ActivitySerializationContext) and c.activity_type == "model.complete"
        for c in inputs
    )
