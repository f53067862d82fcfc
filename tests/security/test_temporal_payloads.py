"""What Temporal holds (issue 25, items 2 and 5): with payload keys the codec refuses
plaintext (a forged stock-CLI signal is not accepted by the worker), failure messages are
encoded, and a run's history read WITHOUT the codec holds no prompt and no failure text."""

import asyncio
import base64
import contextlib
import json
import os
import signal
import stat
import subprocess
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import pytest_asyncio
from google.protobuf import json_format
from pydantic import SecretStr
from temporalio.api.common.v1 import Payload, Payloads
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.service import RPCError
from temporalio.testing import WorkflowEnvironment

from agentrt.contracts.enums import RunStatus
from agentrt.contracts.errors import NoWorkerError, PayloadKeysRequiredError, UnknownProfileError
from agentrt.contracts.run import RunResult
from agentrt.core.codec import EncryptionCodec, PlaintextPayloadError
from agentrt.core.codec_server import create_codec_app, serving
from agentrt.core.devserver import free_port, temporal_cli
from agentrt.core.settings import Settings
from agentrt.core.temporal import data_converter
from agentrt.starter.facade import AgentRuntime
from agentrt.store.demo import DemoWorld
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import WorkerResources, build
from agentrt.workers.main import make_worker
from tests.conftest import FailTimes
from tests.starter.test_embedded import (
    assert_nothing_left,
    demo_env,
    processes_mentioning,
    start_demo,
    wait_until,
)
from tests.workflows._waiting import TASK_ENDED, taken_after, until_history, until_status

KEYS = "k1:" + base64.b64encode(b"p" * 32).decode()
REFUND = "Please refund order 1042"
UI = "http://127.0.0.1:8233"


@dataclass
class Keyed:
    client: Client  # encrypts, as every agentrt process does with AGENTRT_PAYLOAD_KEYS
    plain: Client  # no codec: what Temporal itself (and anyone reading it) sees
    runtime: AgentRuntime
    parts: WorkerResources
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
        async with make_worker(client, built, settings.replace(temporal={"task_queue": queue})):
            yield Keyed(
                client, temporal_env.client, AgentRuntime(client, RunStore(built.ctx), queue),
                built, address,
            )  # fmt: skip
    finally:
        built.close()


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


def _carried_text(history_dict: dict[str, object]) -> str:
    """What the history carries of a run's data: every payload's data decoded and every
    failure's message, one per line. A number searched for here is not met by chance in an
    event's time, id or task token (a time's nanoseconds hold any four digits now and then)."""
    found: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if "metadata" in node and isinstance(node.get("data"), str):
                found.append(base64.b64decode(node["data"]).decode("utf-8", "replace"))
            if isinstance(node.get("message"), str):
                found.append(node["message"])
            for key, value in node.items():
                if key != "searchAttributes":
                    walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(history_dict)
    return "\n".join(found)


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
    # The same decision as the `decide` update: refused, not executed.
    updated = await asyncio.to_thread(
        subprocess.run,
        [
            temporal_cli(), "workflow", "update", "execute", "--address", keyed.address,
            "--workflow-id", waiting.run_id, "--name", "decide", "--input", body,
        ],
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert updated.returncode != 0, updated.stdout
    # The worker has had the signal: a workflow task after it ended, whatever its decoding.
    signalled = taken_after(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED, TASK_ENDED)
    await until_history(keyed.client, waiting.run_id, signalled, "the signal taken")
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


# --- the codec server ---------------------------------------------------------------------


@contextlib.asynccontextmanager
async def codec_http(
    *, allowed_hosts: tuple[str, ...] = (), namespace: str = "default"
) -> AsyncIterator[tuple[httpx.AsyncClient, str]]:
    """The codec server over real HTTP on 127.0.0.1 (no token: a loopback dev server)."""
    app = create_codec_app(
        EncryptionCodec.from_spec(KEYS), [UI], None, namespace=namespace,
        allowed_hosts=allowed_hosts,
    )  # fmt: skip
    async with serving(app, free_port()) as url, httpx.AsyncClient(base_url=url) as http:
        yield http, url


async def _sealed_body(text: str) -> str:
    plain = Payload(metadata={"encoding": b"json/plain"}, data=json.dumps(text).encode())
    return json_format.MessageToJson(
        Payloads(payloads=await EncryptionCodec.from_spec(KEYS).encode([plain]))
    )


def _plain_body(text: str) -> str:
    plain = Payload(metadata={"encoding": b"json/plain"}, data=json.dumps(text).encode())
    return json_format.MessageToJson(Payloads(payloads=[plain]))


async def test_the_codec_server_refuses_to_decode_a_plaintext_payload() -> None:
    async with codec_http() as (http, _):
        reply = await http.post(
            "/decode", content=_plain_body("forged"), headers={"X-Namespace": "default"}
        )
        assert reply.status_code == 400
        assert "not encrypted" in reply.json()["error"]
        # Mixed with a sealed one, the whole request is refused.
        sealed = json_format.Parse(await _sealed_body("real"), Payloads())
        plain = json_format.Parse(_plain_body("forged"), Payloads())
        mixed = Payloads(payloads=[*sealed.payloads, *plain.payloads])
        reply = await http.post("/default/decode", content=json_format.MessageToJson(mixed))
        assert reply.status_code == 400


async def test_the_codec_server_serves_only_its_namespace() -> None:
    body = await _sealed_body("secret prompt")
    async with codec_http(namespace="agents") as (http, _):
        for path, headers in (
            ("/decode", {"X-Namespace": "default"}),
            ("/default/decode", {}),
            ("/default/decode", {"X-Namespace": "agents"}),
            ("/agents/decode", {"X-Namespace": "default"}),
            ("/default/encode", {}),
        ):
            reply = await http.post(path, content=body, headers=headers)
            assert reply.status_code == 403, (path, headers)
            assert "secret" not in reply.text
        unnamed = await http.post("/decode", content=body)
        assert unnamed.status_code == 400
        for path, headers in (("/decode", {"X-Namespace": "agents"}), ("/agents/decode", {})):
            opened = await http.post(path, content=body, headers=headers)
            assert opened.status_code == 200, (path, headers, opened.text)


async def test_the_codec_server_refuses_a_host_name_it_does_not_serve() -> None:
    """DNS rebinding: a page on evil.example resolves its name to 127.0.0.1 and posts to
    the codec server; the Host header still says evil.example."""
    body = await _sealed_body("secret prompt")
    ns = {"X-Namespace": "default"}
    async with codec_http(allowed_hosts=("codec.internal",)) as (http, url):
        port = url.rsplit(":", 1)[1]
        for host in (f"evil.example:{port}", "evil.example", f"127.0.0.1.evil.example:{port}"):
            reply = await http.post("/decode", content=body, headers={**ns, "Host": host})
            assert reply.status_code == 400, host
            assert "secret" not in reply.text
        preflight = await http.options(
            "/decode",
            headers={
                "Host": f"evil.example:{port}", "Origin": UI,
                "Access-Control-Request-Method": "POST",
            },
        )  # fmt: skip
        assert preflight.status_code == 400
        for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"codec.internal:{port}"):
            reply = await http.post("/decode", content=body, headers={**ns, "Host": host})
            assert reply.status_code == 200, host


async def test_the_stock_cli_reads_a_keyed_history_through_the_codec_server(
    keyed: Keyed,
) -> None:
    """The namespace check keeps the stock CLI working: it names the namespace."""
    canary = f"canary-{uuid.uuid4().hex[:8]}"
    run_id = await keyed.runtime.start("reader", f"what about order 1042? {canary}")
    await until_status(keyed.runtime, run_id, RunStatus.COMPLETED)
    async with codec_http() as (_, url):
        for endpoint in (url, url + "/{namespace}"):
            shown = await asyncio.to_thread(
                subprocess.run,
                [
                    temporal_cli(), "workflow", "show", "--address", keyed.address,
                    "--workflow-id", run_id, "--codec-endpoint", endpoint, "--output", "json",
                ],
                capture_output=True, text=True, timeout=30, check=False,
            )  # fmt: skip
            assert shown.returncode == 0, shown.stderr
            assert canary in _history_text(json.loads(shown.stdout)), endpoint


# --- the embedded default -----------------------------------------------------------------


@pytest.fixture
def demo_home(tmp_path: Path) -> Iterator[Path]:
    data_dir = tmp_path / "demo"
    yield data_dir
    # Should the test fail half-way, leave no dev server behind for the rest of the suite.
    for line in processes_mentioning(str(data_dir)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(int(line.split(":", 1)[0]), signal.SIGKILL)


async def test_the_embedded_default_generates_payload_keys_its_processes_share(
    demo_home: Path, tmp_path: Path
) -> None:
    demo_dir = demo_home
    """`agentrt demo` without AGENTRT_PAYLOAD_KEYS: a key under its data directory (0600),
    the demo run's history holds ciphertext only, and a client given the same data
    directory reads it."""
    log = tmp_path / "demo.out"
    with log.open("w") as sink:
        demo = start_demo(demo_dir, "--keep-running", stdout=sink, env=demo_env())
        await asyncio.to_thread(
            wait_until, lambda: "press Ctrl-C to stop" in log.read_text(), 100, "the demo"
        )
    try:
        key_file = demo_dir / "payload.key"
        assert key_file.exists() and stat.S_IMODE(key_file.stat().st_mode) == 0o600
        address = f"127.0.0.1:{demo.port}"
        plain = await Client.connect(address)
        [run] = [w async for w in plain.list_workflows("WorkflowType='AgentRun'")]
        text = _history_text(
            (await plain.get_workflow_handle(run.id).fetch_history()).to_json_dict()
        )
        assert "refund order 1042" not in text and "customer returned" not in text
        reader = Settings().replace(database={"data_dir": demo_dir})
        spec = reader.payload_keys_spec()
        assert spec is not None
        keyed = await Client.connect(address, data_converter=data_converter(spec))
        result = await keyed.get_workflow_handle(run.id, result_type=RunResult).result()
        assert result.status is RunStatus.COMPLETED
    finally:
        demo.proc.send_signal(signal.SIGTERM)
        _, err = await asyncio.to_thread(demo.proc.communicate, timeout=30)
    assert demo.proc.returncode == 0, err
    assert_nothing_left(demo_dir)


# --- privacy below full needs payload keys ------------------------------------------------


async def _connected(
    settings: Settings, temporal_env: WorkflowEnvironment, **update: object
) -> AgentRuntime:
    s = settings.replace(
        temporal={
            "address": _address(temporal_env),
            "task_queue": f"nobody-{uuid.uuid4().hex[:8]}",  # no worker polls it
            "start_timeout_seconds": 1.0,
        },
        privacy=update,
    )
    return await AgentRuntime.connect(s)


async def test_a_profile_below_full_does_not_start_without_payload_keys(
    settings: Settings, temporal_env: WorkflowEnvironment, runs: RunStore
) -> None:
    """`reader` keeps metadata only: without payload keys its prompt would sit in Temporal
    history in the clear (the issue found an `sk-` key there at privacy `none`)."""
    run_id = str(uuid.uuid4())
    runtime = await _connected(settings, temporal_env)
    try:
        with pytest.raises(PayloadKeysRequiredError, match="AGENTRT_PAYLOAD_KEYS"):
            await runtime.start("reader", "sk-live-canary", run_id=run_id)
    finally:
        await runtime.close()
    # Nothing was created: no workflow, no run.
    with pytest.raises(RPCError):
        await temporal_env.client.get_workflow_handle(run_id).describe()
    assert await asyncio.to_thread(runs.get, run_id) is None


async def test_a_profile_below_full_starts_with_payload_keys_or_an_explicit_allowance(
    settings: Settings, temporal_env: WorkflowEnvironment
) -> None:
    for update in ({"payload_keys": SecretStr(KEYS)}, {"allow_plaintext_history": True}):
        runtime = await _connected(settings, temporal_env, **update)
        try:
            # No worker polls its queue: the start is accepted, then withdrawn (NoWorker);
            # what matters is that it was not refused for want of payload keys.
            with pytest.raises(NoWorkerError):
                await runtime.start("reader", "what about order 1042?")
        finally:
            await runtime.close()
