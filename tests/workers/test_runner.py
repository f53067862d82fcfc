"""The workflow runner answers the SDK's context questions outside the sandbox only for a
data converter that takes no context; a converter that does keeps the sandbox's answers."""

import dataclasses
import uuid
from collections.abc import Sequence

from temporalio.api.common.v1 import Payload
from temporalio.client import Client
from temporalio.converter import (
    ActivitySerializationContext,
    PayloadCodec,
    SerializationContext,
    WithSerializationContext,
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
from agentrt.workers.runner import ContextFreeRunner, ignores_context
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
