"""A live A2A server on 127.0.0.1 (uvicorn in a background task), backed by the real
Temporal dev server, the suite's database and a worker with A2A-published profiles."""

import asyncio
import socket
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
import uvicorn
from a2a.client import Client as A2AClient
from a2a.client import ClientConfig, create_client
from temporalio.client import Client

from agentrt.api.app import create_app
from agentrt.api.settings import ApiSettings, key_digest
from agentrt.core.profiles import load_profiles
from agentrt.core.settings import Settings
from agentrt.starter.facade import AgentRuntime
from agentrt.store.a2a.tasks import A2AStore
from agentrt.store.runs import RunStore
from agentrt.workers.compose import WorkerResources, build
from agentrt.workers.main import make_worker
from tests.conftest import TEST_SEAL_KEYS

FIXTURES = Path(__file__).parent / "fixtures"
KEYS = {"alice": "alice-key-4f1c2a9d", "bob": "bob-key-77e0c3b1"}
VERSION = {"A2A-Version": "1.0"}


def _fixture_profiles() -> list[str]:
    return sorted(load_profiles(FIXTURES / "profiles.yaml"))


@pytest.fixture(scope="session")
def a2a_settings(settings: Settings) -> ApiSettings:
    return ApiSettings(
        database_url=settings.database_url,
        seal_keys=TEST_SEAL_KEYS,  # type: ignore[arg-type]
        data_dir=settings.data_dir,
        profiles_file=FIXTURES / "profiles.yaml",
        rules_file=FIXTURES / "rules.yaml",
        api_keys=",".join(f"{who}={key_digest(k)}" for who, k in KEYS.items()),
        # Every fixture profile, each by name (tests/security tests the grants themselves).
        api_key_profiles=",".join(f"{who}={'|'.join(_fixture_profiles())}" for who in KEYS),
        api_default_skill="helper",
        api_blocking_cap_seconds=30.0,
        api_poll_seconds=0.05,
        api_max_body_bytes=64_000,
        api_migrate=False,
        push_allowed_networks="127.0.0.0/8",  # the tests' webhook receivers
        # The fixtures' `guarded` profile keeps metadata only, and these tests' Temporal
        # client has no payload keys: allowed explicitly (issue 25).
        allow_plaintext_history=True,
        push_backoff_seconds=0.2,
        scripted_providers="scripted,strict",
        provider_answer_levels="strict=none",
        _env_file=None,  # type: ignore[call-arg]
    )


@pytest.fixture(scope="session")
def a2a_parts(a2a_settings: ApiSettings) -> Iterator[WorkerResources]:
    built = build(a2a_settings)
    yield built
    built.close()


@dataclass
class Live:
    url: str
    settings: ApiSettings
    runtime: AgentRuntime
    parts: WorkerResources

    @property
    def store(self) -> A2AStore:
        return A2AStore(self.parts.ctx)

    def headers(self, who: str = "alice") -> dict[str, str]:
        return {"Authorization": f"Bearer {KEYS[who]}", **VERSION}

    async def rpc(
        self, method: str, params: dict[str, Any], who: str = "alice", **headers: str
    ) -> dict[str, Any]:
        async with httpx.AsyncClient(timeout=60) as http:
            reply = await http.post(
                self.url + "/",
                json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
                headers={**self.headers(who), **headers},
            )
        assert reply.status_code == 200, reply.text
        body: dict[str, Any] = reply.json()
        return body

    @asynccontextmanager
    async def client(self, who: str = "alice", streaming: bool = False) -> AsyncIterator[A2AClient]:
        http = httpx.AsyncClient(
            headers={"Authorization": f"Bearer {KEYS[who]}"}, timeout=httpx.Timeout(60)
        )
        sdk = await create_client(self.url, ClientConfig(streaming=streaming, httpx_client=http))
        try:
            yield sdk
        finally:
            await sdk.close()
            await http.aclose()


def user_message(text: str, **extra: Any) -> dict[str, Any]:
    return {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}], **extra}


@asynccontextmanager
async def _serve(
    client: Client, settings: ApiSettings, parts: WorkerResources, *, inject: bool = True
) -> AsyncIterator[Live]:
    """`client` serves the worker, and the app too unless `inject` is false: then the app
    connects at start-up from its settings, as `agentrt-api` does."""
    queue = f"tq-{uuid.uuid4().hex[:10]}"
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    s = settings.model_copy(update={"task_queue": queue, "api_port": port, "api_public_url": url})
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(s, client=client if inject else None),
            log_level="warning",
            lifespan="on",
            timeout_graceful_shutdown=3,  # as agentrt-api does (api_shutdown_seconds)
        )
    )
    async with make_worker(client, parts, s):
        task = asyncio.create_task(server.serve(sockets=[sock]))
        try:
            for _ in range(500):
                if server.started:
                    break
                await asyncio.sleep(0.01)
            assert server.started
            yield Live(url, s, AgentRuntime(client, RunStore(parts.ctx), queue), parts)
        finally:
            server.should_exit = True
            await task
            sock.close()


@pytest_asyncio.fixture
async def live(
    client: Client, a2a_settings: ApiSettings, a2a_parts: WorkerResources
) -> AsyncIterator[Live]:
    async with _serve(client, a2a_settings, a2a_parts) as served:
        yield served


@pytest.fixture
def make_live(
    client: Client, a2a_settings: ApiSettings
) -> Callable[[Callable[[str], None]], AbstractAsyncContextManager[Live]]:
    """A live server whose worker has its own fault hook."""

    @asynccontextmanager
    async def _make(faults: Callable[[str], None]) -> AsyncIterator[Live]:
        built = build(a2a_settings, faults=faults)
        try:
            async with _serve(client, a2a_settings, built) as served:
                yield served
        finally:
            built.close()

    return _make
