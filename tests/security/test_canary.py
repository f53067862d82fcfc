"""The canary test of issue 25: runs carry unique canary strings in the prompt, the tool
arguments and results, the model's text, a decision's reason and a provider error that
echoes them and the API key; afterwards nothing holds a canary in the clear.

Paths: the Python facade, the `agentrt run` CLI, the operator API (`POST /runs`, then an
approval, a denial and a cancel, each with a reason), A2A `SendMessage`; outcomes:
completed, approved, denied, cancelled, a provider failure (HTTP 401 whose body echoes the
key and the prompt) and a budget stop;
privacy levels full, redacted, metadata and none. Then it scans:

- every table and every column of the database (reflected, whatever the schema holds),
  except the demo tools' own world (`demo_record`, `demo_ledger`): that is the system a
  tool writes into, outside agentrt's record, and the test checks the approved refund's
  memo canary is there, so the scan is seen to read what it scans;
- every log record at INFO and above, with its traceback if any;
- every event of every run's Temporal history and its description, as raw protobuf
  bytes: payloads, failure messages, search attributes and memo.

AGENTRT_PAYLOAD_KEYS is set for these runs (the same keys on the worker, the API, the CLI
and the client): with payload keys Temporal may hold no canary in the clear. Without them a
run at privacy `full` has its prompt in its history by design (the Privacy page says so); this
test does not check that configuration.
"""

import asyncio
import base64
import json
import logging
import threading
import traceback
import uuid
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from sqlalchemy import Engine, MetaData, select
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from agentrt.api.settings import ApiSettings, key_digest
from agentrt.core.temporal import connect
from agentrt.starter.cli import main as cli_main
from agentrt.store.db.tables import RunRow
from agentrt.store.security.principals import PrincipalStore
from tests._db import migrated, scratch_database
from tests.api.conftest import Live, serving, user_message
from tests.conftest import TEST_SEAL_KEYS

PAYLOAD_KEYS = "canary:" + base64.b64encode(b"p" * 32).decode()
A2A_KEY = "canary-a2a-key-5d1e"
DEMO_WORLD = frozenset({"demo_record", "demo_ledger"})

RULES = """
default_reply: Nothing to do here.
rules:
- name: canary-refund
  match: {regex: 'refund (?P<c>CNY[0-9a-f]+)'}
  steps:
  - text: 'Refunding for {prompt.c}.'
    tool_calls:
    - name: issue_refund
      arguments: {order_id: '1042', amount_cents: 100, memo: '{prompt.c}'}
  - text: 'The refund step for {prompt.c} is over.'
  final: 'Final word on {prompt.c}.'
- name: canary-lookup
  match: {regex: 'lookup (?P<c>CNY[0-9a-f]+)'}
  steps:
  - text: 'Looking up {prompt.c}.'
    tool_calls:
    - name: lookup_order
      arguments: {order_id: '{prompt.c}'}
  - text: 'Order {prompt.c} is unknown to me.'
  final: 'Final word on {prompt.c}.'
"""


def _profile(name: str, privacy: str, **extra: str) -> str:
    lines = [
        f"  - name: {name}",
        "    description: Canary runs.",
        f"    model: {extra.pop('model', 'scripted:demo')}",
        "    tools: [lookup_order, issue_refund]",
        f"    approval: {extra.pop('approval', 'writes')}",
        f"    privacy: {privacy}",
    ]
    lines += [f"    {k}: {v}" for k, v in extra.items()]
    return "\n".join(lines)


PROFILES = "\n".join(
    [
        "profiles:",
        _profile("canary-full", "full"),
        _profile("canary-redacted", "redacted"),
        _profile("canary-metadata", "metadata"),
        _profile("canary-none", "none", approval="none", publish="true"),
        _profile("canary-budget", "full", approval="none", budget="{max_tokens: 1}"),
        _profile("canary-provider", "full", approval="none", model="openai:gpt-canary"),
    ]
)


class EchoingProvider:
    """An OpenAI-compatible endpoint that refuses every call with HTTP 401 and a body that
    echoes the Authorization header and every message it was sent, as a careless proxy
    does."""

    def __init__(self) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                said = " ".join(str(m.get("content")) for m in body.get("messages", []))
                echo = f"Incorrect API key provided: {self.headers['Authorization']}. {said}"
                data = json.dumps({"error": {"message": echo, "code": echo[:60]}}).encode()
                self.send_response(401)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def provider() -> Iterator[EchoingProvider]:
    served = EchoingProvider()
    yield served
    served.close()


@pytest.fixture
def canaries() -> dict[str, str]:
    names = ("facade", "provider", "budget", "cli", "approve", "approve_reason", "deny",
             "deny_reason", "cancel", "cancel_reason", "a2a")  # fmt: skip
    found = {name: f"CNY{uuid.uuid4().hex}" for name in names}
    found["key"] = f"sk-canary{uuid.uuid4().hex}"  # the provider's API key
    return found


@pytest_asyncio.fixture
async def live(
    temporal_env: WorkflowEnvironment,
    tmp_path: Path,
    provider: EchoingProvider,
    canaries: dict[str, str],
) -> AsyncIterator[Live]:
    (tmp_path / "profiles.yaml").write_text(PROFILES)
    (tmp_path / "rules.yaml").write_text(RULES)
    with scratch_database("canary", tmp_path / "canary.db") as url:
        migrated(url)  # as `agentrt migrate` does: no worker migrates
        settings = ApiSettings().replace(
            database={"url": url, "data_dir": tmp_path / "data"},
            privacy={"seal_keys": TEST_SEAL_KEYS, "payload_keys": PAYLOAD_KEYS},
            worker={"profiles_file": tmp_path / "profiles.yaml"},
            providers={
                "rules_file": tmp_path / "rules.yaml",
                "openai_api_key": canaries["key"],
                "openai_base_url": provider.base_url,
            },
            temporal={"address": temporal_env.client.service_client.config.target_host},
            api={
                "keys": f"alice={key_digest(A2A_KEY)}",
                "key_profiles": "alice=canary-none",
                "default_skill": "canary-none",
                "blocking_cap_seconds": 30.0,
                "poll_seconds": 0.05,
            },
        )
        client = await connect(settings)  # the payload keys' codec, as every process has
        async with serving(client, settings) as served:
            yield served


async def _api_run(
    http: httpx.AsyncClient, profile: str, prompt: str, verdict: str, reason: str
) -> str:
    started = await http.post("/runs", json={"profile": profile, "prompt": prompt})
    assert started.status_code == 201, started.text
    run_id: str = started.json()["run_id"]
    run = await _wait(http, run_id, "WAITING_FOR_APPROVAL")
    digest = run["pending_approval"]["turn_digest"]
    decided = await http.post(
        f"/runs/{run_id}/decision",
        json={"verdict": verdict, "turn_digest": digest, "reason": reason},
    )
    assert decided.status_code == 200, decided.text
    await _wait(http, run_id, "COMPLETED")
    return run_id


async def _wait(http: httpx.AsyncClient, run_id: str, status: str) -> dict[str, Any]:
    for _ in range(600):
        reply = await http.get(f"/runs/{run_id}")
        if reply.status_code == 200 and reply.json()["status"] == status:
            body: dict[str, Any] = reply.json()
            return body
        await asyncio.sleep(0.05)
    raise AssertionError(f"run {run_id} never reached {status}: {reply.text}")


def _cli_env(monkeypatch: pytest.MonkeyPatch, settings: ApiSettings) -> None:
    env = {
        "AGENTRT_TEMPORAL_ADDRESS": settings.temporal.address,
        "AGENTRT_DATABASE_URL": settings.database.url,
        "AGENTRT_SEAL_KEYS": TEST_SEAL_KEYS,
        "AGENTRT_PAYLOAD_KEYS": PAYLOAD_KEYS,
        "AGENTRT_TASK_QUEUE": settings.temporal.task_queue,
        "AGENTRT_PROFILES_FILE": str(settings.worker.profiles_file),
        "AGENTRT_RULES_FILE": str(settings.providers.rules_file),
        "AGENTRT_DATA_DIR": str(settings.database.data_dir),
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)


def _hits(text: str, canaries: dict[str, str]) -> list[str]:
    """The canaries in `text`; the key also by its prefix (OpenAI's 401 quotes the first
    characters of the key it refuses)."""
    found = [name for name, c in canaries.items() if c in text]
    if "key" not in found and canaries["key"][:12] in text:
        found.append("key")
    return found


def _scan_database(engine: Engine, canaries: dict[str, str]) -> dict[str, list[str]]:
    """Every value of every column of every table, as text: `table.column` → canaries."""
    meta = MetaData()
    meta.reflect(bind=engine)
    leaks: dict[str, list[str]] = {}
    with engine.connect() as conn:
        for table in meta.sorted_tables:
            for row in conn.execute(select(table)).mappings():
                for column, value in row.items():
                    if value is None:
                        continue
                    if isinstance(value, bytes | memoryview):
                        shown = bytes(value).decode("latin-1")
                    elif isinstance(value, dict | list):
                        shown = json.dumps(value)
                    else:
                        shown = str(value)
                    if hits := _hits(shown, canaries):
                        leaks.setdefault(f"{table.name}.{column}", []).extend(hits)
    return leaks


async def _scan_temporal(client: Client, run_ids: list[str], canaries: dict[str, str]) -> list[str]:
    """Raw protobuf bytes of every history event and of the description: plaintext strings
    and payload bytes appear there as they are, encrypted payloads do not."""
    wanted = {name: c.encode() for name, c in canaries.items()}
    wanted["key prefix"] = canaries["key"][:12].encode()
    leaks = []
    for run_id in run_ids:
        handle = client.get_workflow_handle(run_id)
        history = await handle.fetch_history()
        described = await handle.describe()
        blobs = [ev.SerializeToString() for ev in history.events]
        blobs.append(described.raw_description.SerializeToString())
        assert len(blobs) > 5, run_id  # a real history
        for blob in blobs:
            leaks += [f"{run_id}: {name}" for name, c in wanted.items() if c in blob]
    return leaks


def _scan_logs(records: list[logging.LogRecord], canaries: dict[str, str]) -> list[str]:
    leaks = []
    for record in records:
        text = record.getMessage()
        if record.exc_info:
            text += "".join(traceback.format_exception(*record.exc_info))
        text += record.exc_text or ""
        if hits := _hits(text, canaries):
            leaks.append(f"{record.name} {record.levelname}: {hits}")
    return leaks


@pytest.mark.timeout(180)
async def test_no_canary_is_held_in_the_clear_after_runs_over_every_path(
    live: Live,
    canaries: dict[str, str],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    caplog.set_level(logging.INFO)
    runtime = live.runtime
    c = canaries
    # The Python facade: completed (tool arguments and results carry the canary), a
    # provider failure that echoes the key and the prompt, a budget stop.
    done = await runtime.run("canary-full", f"Please lookup {c['facade']} now")
    failed = await runtime.run("canary-provider", f"Please lookup {c['provider']} now")
    budget = await runtime.run("canary-budget", f"Please lookup {c['budget']} now")
    assert done.status.value == "COMPLETED" and c["facade"] in (done.answer or "")
    assert (failed.status.value, failed.termination_reason) == ("FAILED", "provider_failed")
    assert (budget.status.value, budget.termination_reason) == ("FAILED", "budget_exhausted")
    failed_event = (await runtime.events(failed.run_id))[-1].payload
    assert "401" in failed_event["error"]  # what is left of it is the scans' to judge
    # The CLI, at privacy `redacted`.
    _cli_env(monkeypatch, live.settings)
    code = await asyncio.to_thread(
        cli_main, ["run", "canary-redacted", f"Please lookup {c['cli']} now"]
    )
    assert code == 0
    # The operator API: an approval and a denial, each with a reason that is a canary.
    secret = PrincipalStore(live.parts.ctx).create(
        "carol",
        ["runs:start", "runs:read", "runs:decide", "runs:cancel"],
        profiles=["canary-full", "canary-metadata", "canary-redacted"],
    )[1]
    headers = {"Authorization": f"Bearer {secret}"}
    async with httpx.AsyncClient(base_url=live.url, headers=headers, timeout=60) as http:
        approved = await _api_run(
            http, "canary-full", f"Please refund {c['approve']}", "approve", c["approve_reason"]
        )
        denied = await _api_run(
            http, "canary-metadata", f"Please refund {c['deny']}", "deny", c["deny_reason"]
        )
        events = (await http.get(f"/runs/{approved}/events")).json()["events"]
        # A cancel of a waiting run, its reason a canary too.
        waiting = await http.post(
            "/runs", json={"profile": "canary-redacted", "prompt": f"Please refund {c['cancel']}"}
        )
        cancelled = waiting.json()["run_id"]
        await _wait(http, cancelled, "WAITING_FOR_APPROVAL")
        reply = await http.post(f"/runs/{cancelled}/cancel", json={"reason": c["cancel_reason"]})
        assert reply.status_code == 202, reply.text
        await _wait(http, cancelled, "CANCELLED")
        cancel_events = (await http.get(f"/runs/{cancelled}/events")).json()["events"]
    # Readers open what is sealed: the API shows the full-privacy run's content as before.
    assert c["approve"] in json.dumps(events)
    assert cancel_events[-1]["payload"]["note"] == c["cancel_reason"]
    # A2A SendMessage, at privacy `none`.
    async with httpx.AsyncClient(timeout=60) as http:
        reply = await http.post(
            live.url + "/",
            json={"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                  "params": {"message": user_message(f"Please lookup {c['a2a']} now")}},
            headers={"Authorization": f"Bearer {A2A_KEY}", "A2A-Version": "1.0"},
        )  # fmt: skip
    task = reply.json()["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
    record = live.store.get(task["id"], None)
    assert record is not None
    run_ids = [done.run_id, failed.run_id, budget.run_id, approved, denied, cancelled,
               record.workflow_id]  # fmt: skip
    with live.parts.ctx.sessions() as s:  # the CLI printed its run id; the row names it
        cli_runs = list(
            s.scalars(
                select(RunRow.id).where(RunRow.profile == "canary-redacted", RunRow.id != cancelled)
            )
        )
    assert len(cli_runs) == 1
    run_ids += cli_runs

    leaks = _scan_database(live.parts.engine, c)
    demo = {k: v for k, v in leaks.items() if k.split(".")[0] in DEMO_WORLD}
    assert demo == {"demo_ledger.memo": ["approve"]}  # the scan reads what it scans
    assert {k: v for k, v in leaks.items() if k not in demo} == {}
    assert _scan_logs(caplog.records, c) == []
    assert await _scan_temporal(live.runtime.client, run_ids, c) == []
