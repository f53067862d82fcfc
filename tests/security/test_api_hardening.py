"""Clean refusals of the API (issue 25): a sequence number beyond what the database holds
(above 64 bits; above 32 on PostgreSQL) is a 400, not a 500; a revoked or expired token's
open follow stream closes within seconds; the CDN-backed /docs and /redoc are gone; a
foreign Host header (DNS rebinding) is refused before anything runs; the data directory
and its files are private (0700 / 0600)."""

import asyncio
import os
import stat
import time
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import text, update
from temporalio.client import Client

from agentrt.api.settings import ApiSettings
from agentrt.core.devserver import free_port, start_dev_server, wait_for_port
from agentrt.core.settings import Settings
from agentrt.store.db.context import utcnow
from agentrt.store.db.open import open_store
from agentrt.store.db.sealing import Sealer
from agentrt.store.security.principals import PrincipalStore, TokenRow
from agentrt.workers.compose import WorkerResources
from tests.api.conftest import KEYS, Live, _serve
from tests.api.ops_helpers import REFUND, frames, http, name, start, token, wait_status
from tests.workflows._waiting import until

SSE = {"Accept": "text/event-stream"}
TOO_BIG = str(2**64)
LARGEST = 2**31 - 1  # sequence columns are INTEGER: 32-bit on PostgreSQL


def _type(reply: httpx.Response) -> str:
    body: dict[str, Any] = reply.json()
    return str(body["error"]["type"])


# --- sequence numbers -------------------------------------------------------------------


async def test_an_after_or_last_event_id_beyond_the_sequence_range_is_a_400_not_a_500(
    live: Live,
) -> None:
    async with http(live, token(live, name("alice"), "runs:start", "runs:read")) as c:
        run_id = (await start(c, "helper", "What about order 7?"))["run_id"]
        for after in (TOO_BIG, str(2**63), str(LARGEST + 1), "-5", "seven"):
            reply = await c.get(f"/runs/{run_id}/events", params={"after": after})
            assert reply.status_code == 400, (after, reply.text)
            assert _type(reply) == "invalid_request"
            assert "Traceback" not in reply.text and "SELECT" not in reply.text
        for resume in (TOO_BIG, str(2**63), str(LARGEST + 1), "-5", "seven"):
            headers = {**SSE, "Last-Event-ID": resume}
            reply = await c.get(f"/runs/{run_id}/events", headers=headers)
            assert reply.status_code == 400, (resume, reply.text)
            assert _type(reply) == "bad_last_event_id"
        # The largest sequence is a valid (empty) page.
        fine = await c.get(f"/runs/{run_id}/events", params={"after": str(LARGEST)})
        assert fine.status_code == 200 and fine.json()["events"] == []


def test_an_a2a_resume_position_beyond_the_sequence_range_is_invalid_params() -> None:
    from agentrt.api.a2a.streams import resume_position

    with pytest.raises(Exception, match="journal sequence"):
        resume_position({"last-event-id": TOO_BIG})
    with pytest.raises(Exception, match="journal sequence"):
        resume_position({"last-event-id": str(LARGEST + 1)})
    assert resume_position({"last-event-id": str(LARGEST)}) == LARGEST


# --- open streams of a token that stops being valid --------------------------------------


async def _follow_until_closed(
    live: Live, secret: str, run_id: str, within: float, seen: list[str]
) -> list[str]:
    """The events of a follow stream (into `seen` as they come) until the server closes
    it; fails after `within`."""

    async def read() -> None:
        async with http(live, secret) as c:
            async with c.stream("GET", f"/runs/{run_id}/events", headers=SSE) as reply:
                assert reply.status_code == 200
                async for f in frames(reply):
                    seen.append(f.event)

    await asyncio.wait_for(read(), within)
    return seen


async def _waiting_run(live: Live, starter: str) -> str:
    async with http(live, starter) as c:
        run_id = str((await start(c, "helper", REFUND))["run_id"])
        await wait_status(c, run_id, "WAITING_FOR_APPROVAL")
    return run_id


async def _cancel(live: Live, starter: str, run_id: str) -> None:
    async with http(live, starter) as c:
        await c.post(f"/runs/{run_id}/cancel", json={"reason": "test over"})


@pytest.mark.parametrize("how", ["revoked", "expired"])
async def test_a_revoked_or_expired_tokens_open_follow_stream_closes_within_seconds(
    live: Live, how: str
) -> None:
    starter = token(live, name("alice"), "runs:start", "runs:read", "runs:cancel")
    run_id = await _waiting_run(live, starter)  # waits for approval: its stream stays open
    store = PrincipalStore(live.parts.ctx)
    info, follower = store.create(name("watcher"), ["runs:read-all"])
    try:
        seen: list[str] = []
        reading = asyncio.create_task(_follow_until_closed(live, follower, run_id, 20.0, seen))

        async def sent_all() -> bool:  # the run waits: its last event asks for approval
            return "approval_requested" in seen

        await until(sent_all, "the stream sent what there is")
        assert not reading.done()
        ended_at = time.monotonic()
        if how == "revoked":
            assert store.revoke(info.id)
        else:
            with live.parts.ctx.sessions.begin() as s:
                s.execute(
                    update(TokenRow)
                    .where(TokenRow.id == info.id)
                    .values(expires_at=utcnow() - timedelta(seconds=1))
                )
        await reading
        assert time.monotonic() - ended_at < 5.0
        assert seen[-1] == "error" and "end" not in seen
    finally:
        await _cancel(live, starter, run_id)


# --- /docs and /redoc --------------------------------------------------------------------


async def test_docs_and_redoc_serve_no_cdn_page_and_openapi_json_stays(live: Live) -> None:
    secret = token(live, name("alice"), "runs:read")
    for path in ("/docs", "/redoc", "/docs/oauth2-redirect"):
        for headers in ({}, {"Authorization": f"Bearer {secret}"}):
            async with httpx.AsyncClient(base_url=live.url, timeout=30) as c:
                reply = await c.get(path, headers=headers)
            assert reply.status_code != 200, (path, reply.text[:200])
            assert "cdn" not in reply.text.lower() and "<script" not in reply.text.lower()
    async with httpx.AsyncClient(base_url=live.url, timeout=30) as c:
        schema = await c.get("/openapi.json")
    assert schema.status_code == 200 and "/runs" in schema.json()["paths"]


# --- Host header (DNS rebinding) ---------------------------------------------------------


async def test_a_request_with_a_foreign_host_header_is_refused_before_anything_runs(
    live: Live,
) -> None:
    who = name("alice")
    secret = token(live, who, "runs:start", "runs:read")
    port = live.url.rsplit(":", 1)[1]
    evil = {"Host": f"rebound.attacker.example:{port}"}
    async with http(live, secret) as c:
        run_id = str(uuid.uuid4())
        body = {"profile": "helper", "prompt": "What about order 7?", "run_id": run_id}
        refused = await c.post("/runs", json=body, headers=evil)
        assert refused.status_code == 421, refused.text
        assert _type(refused) == "host_not_allowed"
        assert live.runtime._runs.get(run_id) is None
        for path in ("/me", "/.well-known/agent-card.json", "/ui/", "/openapi.json"):
            assert (await c.get(path, headers=evil)).status_code == 421, path
        a2a = await c.post(
            "/",
            json={"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}},
            headers={**evil, "Authorization": f"Bearer {KEYS['alice']}", "A2A-Version": "1.0"},
        )
        assert a2a.status_code == 421
        assert (await c.get("/healthz", headers=evil)).status_code == 200  # probes
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", "localhost"):
            reply = await c.get("/me", headers={"Host": host})
            assert reply.status_code == 200, (host, reply.text)


async def test_allowed_hosts_add_names_to_a_server_bound_beyond_loopback(
    client: Client, a2a_settings: ApiSettings, a2a_parts: WorkerResources
) -> None:
    # Bound to every address: loopback names are not implied; the public URL's host and
    # AGENTRT_API_ALLOWED_HOSTS are.
    wide = a2a_settings.replace(
        api={
            "host": "0.0.0.0",
            "public_url": "https://agents.example.com",
            "allowed_hosts": "*.internal.example, api",
        }
    )
    from agentrt.api.hosts import HostCheck, allowed_hosts, host_name

    allowed = allowed_hosts(wide)
    check = HostCheck(lambda *_: None, allowed)  # type: ignore[arg-type,return-value]
    for ok in ("agents.example.com", "AGENTS.example.com.", "x.internal.example", "api"):
        assert check.admits(host_name(ok)), ok
    for bad in ("localhost", "127.0.0.1", "0.0.0.0", "evil.example", "internal.example", ""):
        assert not check.admits(host_name(bad)), bad
    assert host_name("[::1]:8080") == "::1" and host_name("a.b:80") == "a.b"
    # Served with these settings (on 127.0.0.1, its public URL set to that address by the
    # fixture): a loopback name it does not serve is refused, a named host admitted.
    async with _serve(client, wide, a2a_parts) as served:
        card = "/.well-known/agent-card.json"
        async with httpx.AsyncClient(base_url=served.url, timeout=30) as c:
            assert (await c.get(card, headers={"Host": "localhost"})).status_code == 421
            named = await c.get(card, headers={"Host": "x.internal.example"})
            assert named.status_code == 200, named.text


# --- the data directory ------------------------------------------------------------------


@pytest.fixture
def loose_umask() -> Iterator[None]:
    """The common default umask (022), which makes world-readable files unless told not to."""
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _local(data: Path) -> Settings:
    return Settings().replace(database={"data_dir": data, "url": ""})


@pytest.mark.usefixtures("loose_umask")
def test_the_data_directory_seal_key_and_sqlite_files_are_private(tmp_path: Path) -> None:
    data = tmp_path / "fresh" / ".agentrt"
    settings = _local(data)
    sealer = Sealer.from_b64(settings.create_seal_key_if_missing())
    engine, _ = open_store(settings.database.resolved_url(), sealer)
    try:
        with engine.begin() as conn:  # a write: the -wal and -shm files exist now
            conn.execute(text("SELECT count(*) FROM agent_run"))
        files = sorted(p for p in data.iterdir())
        assert _mode(data) == 0o700
        assert {p.name for p in files} >= {"seal.key", "agentrt.db", "agentrt.db-wal"}
        for f in files:
            assert _mode(f) == 0o600, (f.name, oct(_mode(f)))
    finally:
        engine.dispose()


@pytest.mark.usefixtures("loose_umask")
def test_a_data_directory_made_before_the_rule_is_tightened_at_start(tmp_path: Path) -> None:
    data = tmp_path / ".agentrt"
    data.mkdir(mode=0o755)
    os.chmod(data, 0o755)
    settings = _local(data)
    sealer = Sealer.from_b64(settings.create_seal_key_if_missing())
    engine, _ = open_store(settings.database.resolved_url(), sealer)
    engine.dispose()
    for f in data.iterdir():
        os.chmod(f, 0o644)  # as an older version left them
    os.chmod(data, 0o755)
    sealer = Sealer.from_b64(settings.create_seal_key_if_missing())  # a worker starts again
    engine, _ = open_store(settings.database.resolved_url(), sealer)
    engine.dispose()
    assert _mode(data) == 0o700
    assert {f.name for f in data.iterdir()} >= {"seal.key", "agentrt.db"}
    for f in data.iterdir():
        assert _mode(f) == 0o600, (f.name, oct(_mode(f)))


@pytest.mark.usefixtures("loose_umask")
async def test_the_dev_servers_state_and_log_under_the_data_directory_are_private(
    tmp_path: Path,
) -> None:
    data = tmp_path / ".agentrt"
    port = free_port()
    proc = await start_dev_server(
        port=port, ui_port=None, db_file=data / "temporal.db", log=data / "temporal.log"
    )
    try:
        await wait_for_port(port)
        assert _mode(data) == 0o700
        made = list(data.iterdir())
        assert {"temporal.db", "temporal.log"} <= {p.name for p in made}
        for f in made:
            assert _mode(f) == 0o600, (f.name, oct(_mode(f)))
    finally:
        proc.terminate()
        await proc.wait()
