"""What Temporal holds (issue 25, items 2 and 5): with payload keys the codec refuses
plaintext (a forged stock-CLI signal is not accepted by the worker), failure messages are
encoded, and a run's history read WITHOUT the codec holds no prompt and no failure text."""

import asyncio
import base64
import json
import subprocess
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import pytest
import pytest_asyncio
from temporalio.api.common.v1 import Payload
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from agentrt.contracts.enums import RunStatus
from agentrt.contracts.errors import UnknownProfileError
from agentrt.core.codec import EncryptionCodec, PlaintextPayloadError
from agentrt.core.devserver import temporal_cli
from agentrt.core.settings import Settings
from agentrt.core.temporal import data_converter
from agentrt.starter.facade import AgentRuntime
from agentrt.store.demo import DemoWorld
from agentrt.store.runs import RunStore
from agentrt.workers.compose import Parts, build
from agentrt.workers.main import make_worker
from tests.conftest import FailTimes
from tests.workflows._waiting import until_status

KEYS = "k1:" + base64.b64encode(b"p" * 32).decode()
REFUND = "Please refund order 1042"


@dataclass
class Keyed:
    client: Client  # encrypts, as every agentrt process does with AGENTRT_PAYLOAD_KEYS
    plain: Client  # no codec: what Temporal itself (and anyone reading it) sees
    runtime: AgentRuntime
    parts: Parts
    address: str


def _address(env: WorkflowEnvironment) -> str:
    return env.client.service_client.config.target_host


@pytest_asyncio.fixture
async def keyed(
    temporal_env: WorkflowEnvironment, settings: Settings, fault: FailTimes
) -> AsyncIterator[Keyed]:
    address = _address(temporal_env)
    client = await Client.connect(address, data_converter=data_converter(KEYS))
    built = build(settings, faults=fault)
    queue = f"tq-{uuid.uuid4().hex[:10]}"
    try:
        async with make_worker(client, built, settings.model_copy(update={"task_queue": queue})):
            yield Keyed(
                client, temporal_env.client, AgentRuntime(client, RunStore(built.ctx), queue),
                built, address,
            )  # fmt: skip
    finally:
        built.engine.dispose()


@pytest.fixture
def fault() -> FailTimes:
    # Fails the suspension once with text a failure message must not show in the clear.
    return FailTimes("suspend.before_commit")


def _history_text(history_dict: dict[str, object]) -> str:
    """The history as JSON, every payload's data decoded from base64 (as anyone reading
    Temporal would), without search attributes (plaintext metadata by design)."""

    def strip(node: object) -> object:
        if isinstance(node, dict):
            out = {k: strip(v) for k, v in node.items() if k != "searchAttributes"}
            if "metadata" in node and isinstance(node.get("data"), str):
                out["data"] = base64.b64decode(node["data"]).decode("utf-8", "replace")
            return out
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    return json.dumps(strip(history_dict), ensure_ascii=False)


def _failures(node: object) -> Iterator[dict[str, object]]:
    if isinstance(node, dict):
        if "message" in node and ("applicationFailureInfo" in node or "stackTrace" in node):
            yield node
        for v in node.values():
            yield from _failures(v)
    elif isinstance(node, list):
        for v in node:
            yield from _failures(v)


async def _raw_history(plain: Client, run_id: str) -> dict[str, object]:
    history = await plain.get_workflow_handle(run_id).fetch_history()
    return history.to_json_dict()


async def test_the_codec_refuses_a_payload_that_is_not_encrypted() -> None:
    codec = EncryptionCodec.from_spec(KEYS)
    plain = Payload(metadata={"encoding": b"json/plain"}, data=b'{"approved": true}')
    with pytest.raises(PlaintextPayloadError):
        await codec.decode([plain])
    # Its own payloads still open.
    sealed = await codec.encode([plain])
    assert await codec.decode(sealed) == [plain]


async def test_a_plaintext_approve_sent_with_the_stock_cli_is_refused_by_a_keyed_worker(
    keyed: Keyed,
) -> None:
    """The probe of issue 25: with AGENTRT_PAYLOAD_KEYS set, a plaintext signal used to pass
    through the codec and approve. The profile here opts in to unattested decisions, so only
    the codec stands in the way; the run must go on waiting, and not be stalled by it."""
    waiting = await keyed.runtime.run("stock-cli", REFUND, initiator="alice")
    assert waiting.pending_approval is not None
    digest = waiting.pending_approval.turn_digest
    body = json.dumps({"approved": True, "decided_by": "mallory", "turn_digest": digest})
    sent = await asyncio.to_thread(
        subprocess.run,
        [
            temporal_cli(), "workflow", "signal", "--address", keyed.address,
            "--workflow-id", waiting.run_id, "--name", "approve", "--input", body,
        ],
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert sent.returncode == 0, sent.stderr
    await asyncio.sleep(1.5)  # the worker has had the signal (a workflow task) by now
    assert (await keyed.runtime.status(waiting.run_id)).status is RunStatus.WAITING_FOR_APPROVAL
    assert DemoWorld(keyed.parts.ctx).ledger_count(run_id=waiting.run_id) == 0
    # The run is not stalled: an encrypted decision still goes through.
    await keyed.runtime.approve(waiting.run_id, approved=True, decided_by="bob", turn_digest=digest)
    done = await until_status(keyed.runtime, waiting.run_id, RunStatus.COMPLETED)
    assert DemoWorld(keyed.parts.ctx).ledger_count(run_id=done.run_id) == 1


async def test_a_keyed_run_leaves_no_prompt_and_no_failure_text_in_temporal_history(
    keyed: Keyed, fault: FailTimes
) -> None:
    canary = f"canary-{uuid.uuid4().hex[:8]}"
    prompt = f"{REFUND} {canary}"
    waiting = await keyed.runtime.run("support", prompt, initiator="alice")
    assert fault.reached >= 1  # the suspension failed once (its failure is in history)
    assert waiting.pending_approval is not None
    await keyed.runtime.approve(
        waiting.run_id, approved=True, decided_by="bob",
        turn_digest=waiting.pending_approval.turn_digest,
    )  # fmt: skip
    done = await until_status(keyed.runtime, waiting.run_id, RunStatus.COMPLETED)
    assert done.answer

    # A run that fails: its failure message names the (user-chosen) profile.
    failed = str(uuid.uuid4())
    with pytest.raises(UnknownProfileError) as unknown:
        await keyed.runtime.start(f"no-such-{canary}", prompt, run_id=failed)
    assert canary in str(unknown.value)  # the keyed client reads the message back

    for run_id in (done.run_id, failed):
        raw = await _raw_history(keyed.plain, run_id)
        text = _history_text(raw)
        assert canary not in text and "hunter2" not in text, run_id
        assert "Please refund" not in text
        for failure in _failures(raw):
            assert failure["message"] == "Encoded failure", failure
            assert not failure.get("stackTrace")
        assert list(_failures(raw)), f"{run_id}: no failure recorded, nothing was checked"
