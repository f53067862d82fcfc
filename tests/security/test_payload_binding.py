"""Issue 41 (2): a payload is bound to its run. On cf842b3 payloads were AES-GCM with no
associated data, so nothing tied one to its run: the sign-in codec could be handed any
run's ciphertext, and a payload copied from one run's history was accepted by another.
Now every payload carries its run as associated data (envelope v2, core/codec.py), and
payloads written before (v1) still decode: runs in flight and recorded histories."""

import asyncio
import base64
import dataclasses
import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from temporalio.api.common.v1 import Payload
from temporalio.api.history.v1 import History
from temporalio.client import WorkflowHistory
from temporalio.converter import (
    ActivitySerializationContext,
    WorkflowSerializationContext,
)
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Replayer

from agentrt.contracts.enums import RunStatus
from agentrt.core.codec import REFUSED, RUN, EncryptionCodec, PlaintextPayloadError, bound_run
from agentrt.core.settings import Settings
from agentrt.core.temporal import data_converter
from agentrt.store.demo import DemoWorld
from agentrt.workers.compose import WorkerResources
from agentrt.workers.main import sandbox_runner
from agentrt.workflows.agent_run import AgentRunWorkflow
from tests._cipher import assert_ciphertext_history
from tests._codec_v1 import V1Codec, seal_history
from tests.security._keyed import Keyed, keyed_worker
from tests.workflows._waiting import until_status

KEYS = "b1:" + base64.b64encode(b"b" * 32).decode()
HISTORIES = Path(__file__).resolve().parents[1] / "histories"
PLAIN = Payload(metadata={"encoding": b"json/plain"}, data=json.dumps("secret prompt").encode())


def _in(run: str, codec: EncryptionCodec | None = None) -> EncryptionCodec:
    return (codec or EncryptionCodec.from_spec(KEYS)).with_context(
        WorkflowSerializationContext(namespace="default", workflow_id=run)
    )


async def test_a_payload_is_bound_to_the_run_it_was_made_for() -> None:
    run_a, run_b = str(uuid.uuid4()), str(uuid.uuid4())
    [sealed] = await _in(run_a).encode([PLAIN])
    assert bound_run(sealed) == run_a
    assert await _in(run_a).decode([sealed]) == [PLAIN]
    # An activity of that run, and a codec that knows no run (the codec servers), read it.
    activity = EncryptionCodec.from_spec(KEYS).with_context(
        ActivitySerializationContext(
            namespace="default", activity_id="1", activity_type="t", activity_task_queue="q",
            workflow_id=run_a, workflow_type="AgentRun", is_local=False,
        )
    )  # fmt: skip
    assert await activity.decode([sealed]) == [PLAIN]
    assert await EncryptionCodec.from_spec(KEYS).decode([sealed]) == [PLAIN]
    # Sent to another run, it is refused: a client raises, a worker drops it and says where.
    with pytest.raises(ValueError, match="bound to run"):
        await _in(run_b).decode([sealed])
    heard: list[str] = []
    worker = _in(run_b, EncryptionCodec.from_spec(KEYS).refusing(heard.append))
    assert await worker.decode([sealed]) == [Payload(metadata={"encoding": REFUSED})]
    assert heard == [run_b]
    # Relabelled to the other run, it does not open anywhere: the run is associated data.
    moved = Payload()
    moved.CopyFrom(sealed)
    moved.metadata[RUN] = run_b.encode()
    for codec in (_in(run_b), EncryptionCodec.from_spec(KEYS)):
        with pytest.raises(ValueError, match="does not open"):
            await codec.decode([moved])


async def test_a_scheduled_workflow_reads_the_input_its_schedule_bound() -> None:
    """A Schedule's action is encoded under the action's id; the workflow it starts is that
    id followed by `-<time>` (the retention pass)."""
    [sealed] = await _in("agentrt-retention-pass").encode([PLAIN])
    started = _in("agentrt-retention-pass-2026-12-06T00:00:00Z")
    assert await started.decode([sealed]) == [PLAIN]
    with pytest.raises(ValueError, match="bound to run"):
        await _in("agentrt-retention-passover").decode([sealed])


async def test_v1_payloads_written_before_still_decode_anywhere() -> None:
    sealed = V1Codec(KEYS).seal(PLAIN)
    assert bound_run(sealed) is None
    for codec in (_in(str(uuid.uuid4())), EncryptionCodec.from_spec(KEYS)):
        assert await codec.decode([sealed]) == [PLAIN]
    with pytest.raises(PlaintextPayloadError):  # plaintext is refused as before
        await EncryptionCodec.from_spec(KEYS).decode([PLAIN])


@pytest_asyncio.fixture
async def keyed(
    temporal_env: WorkflowEnvironment, parts: WorkerResources, settings: Settings
) -> AsyncIterator[Keyed]:
    own = settings.replace(temporal={"task_queue": f"tq-{uuid.uuid4().hex[:10]}"})
    async with keyed_worker(temporal_env, parts, own, KEYS) as keyed:
        yield keyed


async def test_every_payload_of_a_keyed_run_is_bound_to_that_run(keyed: Keyed) -> None:
    canary = f"canary-{uuid.uuid4().hex[:8]}"
    waiting = await keyed.runtime.run(keyed.profile, f"Please refund order 1042 {canary}")
    assert waiting.pending_approval is not None
    await keyed.runtime.approve(
        waiting.run_id, approved=True, decided_by="bob",
        turn_digest=waiting.pending_approval.turn_digest,
    )  # fmt: skip
    await until_status(keyed.runtime, waiting.run_id, RunStatus.COMPLETED)
    # Start input and memo, update and signal inputs and results, every activity's input
    # and result, local activities' results: each bound to this run.
    checked = await assert_ciphertext_history(keyed.plain, waiting.run_id, canary, bound=True)
    assert checked >= 10


async def test_a_run_started_by_a_v1_client_finishes_on_this_build(
    keyed: Keyed, temporal_env: WorkflowEnvironment
) -> None:
    """A run in flight from before: its start input (and its decision) in the old
    envelope, its worker today's."""
    old_converter = dataclasses.replace(data_converter(KEYS), payload_codec=V1Codec(KEYS))
    old_runtime = await keyed.runtime_with(old_converter)
    waiting = await old_runtime.start(keyed.profile, "Please refund order 1042", wait="accepted")
    start = (await keyed.plain.get_workflow_handle(waiting).fetch_history()).events[0]
    [first] = start.workflow_execution_started_event_attributes.input.payloads
    assert bound_run(first) is None  # the old envelope, as a run in flight has it
    view = await until_status(keyed.runtime, waiting, RunStatus.WAITING_FOR_APPROVAL)
    assert view.pending_approval is not None
    await keyed.runtime.approve(
        waiting, approved=True, decided_by="bob", turn_digest=view.pending_approval.turn_digest
    )
    await until_status(keyed.runtime, waiting, RunStatus.COMPLETED)
    assert DemoWorld(keyed.parts.ctx).ledger_count(run_id=waiting) == 1


@pytest.mark.parametrize(
    "name", ["0.3.1-approved", "0.3.1-a2a_input_required", "next-reconcile_applied"]
)
async def test_a_recorded_history_sealed_in_the_old_envelope_replays(name: str) -> None:
    data = json.loads(await asyncio.to_thread((HISTORIES / f"{name}.json").read_text))
    history = WorkflowHistory.from_json(data["workflow_id"], data["history"])
    proto = History(events=list(history.events))
    assert seal_history(proto, V1Codec(KEYS)) > 5
    sealed = WorkflowHistory(data["workflow_id"], list(proto.events))
    replayer = Replayer(
        workflows=[AgentRunWorkflow],
        data_converter=data_converter(KEYS),
        workflow_runner=sandbox_runner(),
    )
    result = await replayer.replay_workflow(sealed, raise_on_replay_failure=False)
    assert result.replay_failure is None, result.replay_failure
