"""Shared pieces of the operator API tests: tokens, an HTTP client, SSE reading."""

import json
import uuid
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from temporalio.client import Client

from agentrt.api.settings import ApiSettings
from agentrt.contracts.profiles import Profile
from agentrt.core.profiles import load_profiles
from agentrt.store.ops.registry import ProfileRegistry
from agentrt.store.security.principals import PrincipalStore
from agentrt.workers.compose import WorkerResources
from tests.api.conftest import Live, _serve
from tests.conftest import TEST_SEAL_KEYS
from tests.workflows._waiting import until_found

FIXTURES = Path(__file__).parent / "fixtures"

REFUND = "Please refund order 1042"
LOOKUP = "What about order 7?"
DECIDER = ("runs:start", "runs:read", "runs:decide")
ALL_SCOPES = ("runs:start", "runs:read", "runs:read-all", "runs:decide", "runs:cancel")


def admin_env(monkeypatch: pytest.MonkeyPatch, live: Live) -> None:
    """What `agentrt-api`'s admin commands read: the live server's database and keys."""
    monkeypatch.setenv("AGENTRT_DATABASE_URL", live.settings.database.url)
    monkeypatch.setenv("AGENTRT_SEAL_KEYS", TEST_SEAL_KEYS)
    monkeypatch.setenv("AGENTRT_DATA_DIR", str(live.settings.database.data_dir))


def name(prefix: str) -> str:
    """A principal of this test only (the database is shared by the session)."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def token(
    live: Live,
    principal: str,
    *scopes: str,
    expires_at: datetime | None = None,
    profiles: list[str] | None = None,
) -> str:
    """A token of `scopes`, granted `profiles` (default: every profile of the served file, each
    by name, so these tests start what they like; tests/security tests the grants)."""
    granted = every_profile(live) if profiles is None else profiles
    store = PrincipalStore(live.parts.ctx)
    return store.create(principal, list(scopes), profiles=granted, expires_at=expires_at)[1]


def every_profile(live: Live) -> list[str]:
    return sorted(load_profiles(live.settings.worker.profiles_file))


@asynccontextmanager
async def http(live: Live, secret: str | None) -> AsyncIterator[httpx.AsyncClient]:
    headers = {"Authorization": f"Bearer {secret}"} if secret else {}
    async with httpx.AsyncClient(base_url=live.url, headers=headers, timeout=60) as client:
        yield client


def error_type(reply: httpx.Response) -> str:
    body: dict[str, Any] = reply.json()
    return str(body["error"]["type"])


async def start(client: httpx.AsyncClient, profile: str, prompt: str) -> dict[str, Any]:
    reply = await client.post("/runs", json={"profile": profile, "prompt": prompt})
    assert reply.status_code == 201, reply.text
    body: dict[str, Any] = reply.json()
    return body


async def wait_status(
    client: httpx.AsyncClient, run_id: str, *statuses: str, seconds: float = 30
) -> dict[str, Any]:
    """The run as GET /runs/{id} shows it, once it is in one of `statuses`."""

    async def in_status() -> dict[str, Any] | None:
        reply = await client.get(f"/runs/{run_id}")
        shown = reply.status_code == 200 and reply.json()["status"] in statuses
        return reply.json() if shown else None

    return await until_found(in_status, f"run {run_id} in {statuses}", seconds)


async def waiting_for_approval(
    client: httpx.AsyncClient, profile: str, prompt: str = REFUND
) -> tuple[str, str]:
    """Start a run of `profile` over `client`; once it waits for approval, its id and the
    digest of the turn it waits on."""
    run_id = (await start(client, profile, prompt))["run_id"]
    waiting = await wait_status(client, run_id, "WAITING_FOR_APPROVAL")
    return run_id, str(waiting["pending_approval"]["turn_digest"])


async def approve(client: httpx.AsyncClient, run_id: str, digest: str) -> httpx.Response:
    """POST the approval of the turn of digest `digest` the run waits on."""
    return await client.post(
        f"/runs/{run_id}/decision", json={"verdict": "approve", "turn_digest": digest}
    )


@dataclass
class Waiting:
    """A refund run waiting for approval, started by `who` with `secret` over `api`."""

    api: httpx.AsyncClient
    who: str
    secret: str
    run_id: str
    view: dict[str, Any]  # the run as GET /runs/{id} showed it waiting

    @property
    def digest(self) -> str:
        return str(self.view["pending_approval"]["turn_digest"])


@asynccontextmanager
async def waiting_refund(
    live: Live, prefix: str, scopes: tuple[str, ...] = DECIDER
) -> AsyncIterator[Waiting]:
    """A new principal (named from `prefix`, granted `scopes`) starts a refund on the
    `helper` profile; yields once it waits for approval, its HTTP client still open."""
    who = name(prefix)
    secret = token(live, who, *scopes)
    async with http(live, secret) as api:
        run_id = (await start(api, "helper", REFUND))["run_id"]
        view = await wait_status(api, run_id, "WAITING_FOR_APPROVAL")
        yield Waiting(api, who, secret, run_id, view)


@dataclass
class Frame:
    event: str
    data: dict[str, Any]
    id: int | None
    raw_id: str | None = None  # as sent: a live follow's is `<sequence>:<live id>`


async def frames(reply: httpx.Response) -> AsyncIterator[Frame]:
    """Parse an SSE response into frames (comments and retry lines skipped)."""
    event, data, ident, raw = "message", "", None, None
    async for line in reply.aiter_lines():
        if line == "":
            if data:
                yield Frame(event, json.loads(data), ident, raw)
            event, data, ident, raw = "message", "", None, None
        elif line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: "):
            data += line[6:]
        elif line.startswith("id: "):
            raw = line[4:]
            ident = None if ":" in raw else int(raw)


@asynccontextmanager
async def lonely_api(
    client: Client, a2a_settings: ApiSettings, a2a_parts: WorkerResources
) -> AsyncIterator[tuple[Live, str]]:
    """The API with `helper` registered on a queue of its own, where no worker polls until
    a test starts one (start bound 2 s); the suite's registration is put back after."""
    lonely = f"nobody-{name('q')}"
    served = load_profiles(FIXTURES / "profiles.yaml")
    registry = ProfileRegistry(a2a_parts.ctx)
    registry.register([served["helper"].model_copy(update={"task_queue": lonely})])
    settings = a2a_settings.replace(temporal={"start_timeout_seconds": 2.0})
    try:
        async with _serve(client, settings, a2a_parts) as live:
            yield live, lonely
    finally:
        register_as_the_suite(a2a_parts, served.values())


def register_as_the_suite(parts: WorkerResources, profiles: Iterable[Profile]) -> str:
    """Register `profiles` as the suite's worker (`parts`) does: with what each one's tools
    may do (its reach), which the MCP tools' annotations read; a registration without it
    reads as "may write" to every later test on this database."""
    catalog = parts.catalog
    served = list(profiles)
    reach = {p.name: catalog.reach(p.name) for p in served} if catalog is not None else None
    return ProfileRegistry(parts.ctx).register(served, reach=reach)
