"""Issue 41, L9: a start from a client without payload keys, against keyed workers, left a
workflow Running for ever on cf842b3 (its first task failing every 10 s), its prompt in
the clear in Temporal history, out of retention's reach. Now our clients refuse it before
a workflow exists (the workers register their payload key ids), and one that comes round
them (a plain Temporal client, as the stock CLI is) is ended by the worker and deleted,
so nothing of it stays in Temporal."""

import base64
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from temporalio.service import RPCError, RPCStatusCode
from temporalio.testing import WorkflowEnvironment

from agentrt.contracts.enums import RunStatus
from agentrt.contracts.errors import PayloadKeysRequiredError
from agentrt.contracts.ids import SIGNAL_APPROVE, WORKFLOW_AGENT_RUN
from agentrt.contracts.run import RunRequest
from agentrt.core.settings import Settings
from agentrt.core.temporal import data_converter
from agentrt.starter.facade import AgentRuntime
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import build
from tests.security._keyed import Keyed, keyed_worker
from tests.workflows._waiting import until_gone, until_status, workflow_gone

KEYS = "w2:" + base64.b64encode(b"2" * 32).decode() + ",w1:" + base64.b64encode(b"1" * 32).decode()
OTHER = "x9:" + base64.b64encode(b"9" * 32).decode()
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest_asyncio.fixture
async def keyed(
    temporal_env: WorkflowEnvironment, settings: Settings, tmp_path: Path
) -> AsyncIterator[Keyed]:
    profile = f"keyed-{uuid.uuid4().hex[:8]}"  # served only by this test's keyed worker
    profiles = tmp_path / "profiles.yaml"
    profiles.write_text(
        "profiles:\n"
        f"  - {{name: {profile}, model: 'scripted:demo', tools: [lookup_order, issue_refund],"
        " approval: writes}\n"
    )
    keyed_settings = settings.replace(
        privacy={"payload_keys": KEYS},
        worker={"profiles_file": profiles},
        temporal={"task_queue": f"tq-{uuid.uuid4().hex[:10]}"},
    )
    parts = build(keyed_settings)
    try:
        async with keyed_worker(temporal_env, parts, keyed_settings, KEYS, profile) as keyed:
            yield keyed
    finally:
        parts.close()


async def _runtime(k: Keyed, keys: str | None) -> AgentRuntime:
    return await k.runtime_with(data_converter(keys))


async def test_a_client_without_the_workers_keys_is_refused_before_a_workflow_exists(
    keyed: Keyed,
) -> None:
    for keys, said in (
        (None, "this client has no payload keys"),
        (OTHER, "encrypts with payload key 'x9', which the workers serving"),
    ):
        runtime = await _runtime(keyed, keys)
        run_id = str(uuid.uuid4())
        with pytest.raises(PayloadKeysRequiredError) as err:
            await runtime.start(keyed.profile, "Please refund order 1042", run_id=run_id)
        assert said in str(err.value) and "AGENTRT_PAYLOAD_KEYS" in str(err.value)
        assert await workflow_gone(keyed.plain, run_id)  # nothing was started in Temporal
    # The workers' older key is still theirs: a client on it starts (and is read).
    older = "w1:" + base64.b64encode(b"1" * 32).decode() + "," + KEYS
    view = await (await _runtime(keyed, older)).run(keyed.profile, "Please refund order 1042")
    assert view.status is RunStatus.WAITING_FOR_APPROVAL


async def test_a_plaintext_start_that_came_round_the_client_is_ended_with_nothing_left(
    keyed: Keyed,
) -> None:
    canary = f"canary-{uuid.uuid4().hex[:8]}"
    run_id = str(uuid.uuid4())
    request = RunRequest(run_id=run_id, profile=keyed.profile, prompt=f"refund 1042 {canary}")
    # A plain client, as the stock CLI: its input is plaintext.
    await keyed.plain.start_workflow(WORKFLOW_AGENT_RUN, request, id=run_id, task_queue=keyed.queue)
    # The worker's first task refuses the input, then deletes the run.
    await until_gone(keyed.plain, run_id, within=60)
    # Deleted, not merely ended: no execution, no history, no row for the run.
    with pytest.raises(RPCError) as err:
        await keyed.plain.get_workflow_handle(run_id).fetch_history()
    assert err.value.status is RPCStatusCode.NOT_FOUND
    assert RunStore(keyed.parts.ctx).get(run_id) is None


async def test_a_plaintext_signal_to_a_run_that_began_ends_nothing(keyed: Keyed) -> None:
    runtime = keyed.runtime
    waiting = await runtime.run(keyed.profile, "Please refund order 1042")
    assert waiting.pending_approval is not None
    forged = {"approved": True, "decided_by": "mallory", "turn_digest": "x"}
    await keyed.plain.get_workflow_handle(waiting.run_id).signal(SIGNAL_APPROVE, forged)
    # The worker has had it once a query is answered after it (queries follow signals).
    await runtime.approve(
        waiting.run_id, approved=False, decided_by="bob", reason="no",
        turn_digest=waiting.pending_approval.turn_digest,
    )  # fmt: skip
    done = await until_status(runtime, waiting.run_id, RunStatus.COMPLETED)
    assert not await workflow_gone(keyed.plain, done.run_id)
