"""A live A2A server on 127.0.0.1 (uvicorn in a background task), backed by the real
Temporal dev server, the suite's database and a worker with A2A-published profiles."""

import socket
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import pytest_asyncio
import uvicorn
from a2a.client import Client as A2AClient
from a2a.client import ClientConfig, create_client
from temporalio.client import Client

from agentrt.api.app import create_app
from agentrt.api.metrics import ApiMetrics
from agentrt.api.settings import ApiSettings
from agentrt.core.settings import Settings
from agentrt.starter.facade import AgentRuntime
from agentrt.store.a2a.tasks import A2AStore
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import WorkerResources
from agentrt.workers.main import make_worker
from bench.a2a_fixtures import fixture_groups
from tests._asgi import running
from tests._built import built
from tests.conftest import TEST_SEAL_KEYS

KEYS = {"alice": "alice-key-4f1c2a9d", "bob": "bob-key-77e0c3b1"}
VERSION = {"A2A-Version": "1.0"}


@pytest.fixture(scope="session")
def a2a_settings(settings: Settings) -> ApiSettings:
    # Every fixture profile, each by name (tests/security tests the grants themselves).
    groups = fixture_groups(KEYS, blocking_cap_seconds=30.0, max_body_bytes=64_000, migrate=False)
    return ApiSettings().replace(
        database={"url": settings.database.url, "data_dir": settings.database.data_dir},
        # The fixtures' `guarded` profile keeps metadata only, and these tests' Temporal
        # client has no payload keys: allowed explicitly (issue 25).
        privacy={"seal_keys": TEST_SEAL_KEYS, "allow_plaintext_history": True},
        **groups,
        # the tests' webhook receivers
        push={"allowed_networks": "127.0.0.0/8", "backoff_seconds": 0.2},
    )


@pytest.fixture(scope="session")
def a2a_parts(a2a_settings: ApiSettings) -> Iterator[WorkerResources]:
    with built(a2a_settings) as resources:
        yield resources


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
    client: Client,
    settings: ApiSettings,
    parts: WorkerResources,
    *,
    inject: bool = True,
    metrics: ApiMetrics | None = None,
) -> AsyncIterator[Live]:
    """`client` serves the worker, and the app too unless `inject` is false: then the app
    connects at start-up from its settings, as `agentrt-api` does. With `metrics`, the app
    is measured and watched as `agentrt-api serve` does it."""
    queue = f"tq-{uuid.uuid4().hex[:10]}"
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    s = settings.replace(temporal={"task_queue": queue}, api={"port": port, "public_url": url})
    app = create_app(s, client=client if inject else None)
    if metrics is not None:
        metrics.watch(app.state.a2a.ctx)
        metrics.instrument(app)
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            log_level="warning",
            lifespan="on",
            timeout_graceful_shutdown=3,  # as agentrt-api does (api_shutdown_seconds)
        )
    )
    async with make_worker(client, parts, s), running(server, sock):
        yield Live(url, s, AgentRuntime(client, RunStore(parts.ctx), queue), parts)


@asynccontextmanager
async def serving(
    client: Client, settings: ApiSettings, *, faults: Callable[[str], None] | None = None
) -> AsyncIterator[Live]:
    """A live server over worker resources of its own, built from `settings`."""
    with built(settings, faults=faults) as parts:
        async with _serve(client, settings, parts) as served:
            yield served


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

    def _make(faults: Callable[[str], None]) -> AbstractAsyncContextManager[Live]:
        return serving(client, a2a_settings, faults=faults)

    return _make
