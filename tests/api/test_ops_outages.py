"""The operator API when what it stands on is missing: no worker for a run's queue, Temporal
gone, the database gone. Each is a typed JSON error (503 with Retry-After), never a bare 500.
"""

import asyncio
import logging
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from sqlalchemy.engine import make_url
from temporalio.client import Client

from agentrt.api.a2a.delivery import PushDelivery
from agentrt.api.metrics import ApiMetrics
from agentrt.api.settings import ApiSettings
from agentrt.starter import remote
from agentrt.workers.compose import WorkerResources
from tests._db import backend
from tests._proxy import FlakyProxy
from tests.api.conftest import Live, _serve
from tests.api.ops_helpers import (
    LOOKUP,
    REFUND,
    error_type,
    http,
    lonely_api,
    name,
    start,
    token,
    wait_status,
)
from tests.workflows._waiting import until, watch

FIXTURES = Path(__file__).parent / "fixtures"


@pytest_asyncio.fixture
async def proxy_to() -> AsyncIterator[list[FlakyProxy]]:
    """Proxies a test opens; every one is closed after it."""
    opened: list[FlakyProxy] = []
    yield opened
    for p in opened:
        p.close()


def _proxy(opened: list[FlakyProxy], host: str, port: int) -> FlakyProxy:
    p = FlakyProxy(host, port)
    p.start()
    opened.append(p)
    return p


async def _start(live: Live) -> tuple[int, str, str, dict[str, str]]:
    async with http(live, token(live, name("ops"), "runs:start", "runs:read")) as client:
        reply = await client.post("/runs", json={"profile": "helper", "prompt": LOOKUP})
    return reply.status_code, error_type(reply), reply.json()["error"]["message"], reply.headers


async def test_a_start_no_worker_begins_is_503_no_worker(
    client: Client, a2a_settings: ApiSettings, a2a_parts: WorkerResources
) -> None:
    async with lonely_api(client, a2a_settings, a2a_parts) as (live, lonely):
        began = time.monotonic()
        status, kind, message, headers = await _start(live)
        waited = time.monotonic() - began
    assert (status, kind) == (503, "no_worker"), message
    assert waited < 20, f"the API waited {waited:.0f} s: not its start bound (2 s) but 30"
    assert headers["retry-after"] == "1"
    assert f"no worker is polling task queue {lonely!r}" in message


async def test_a_start_with_temporal_gone_is_503_temporal_unavailable(
    client: Client,
    a2a_settings: ApiSettings,
    a2a_parts: WorkerResources,
    proxy_to: list[FlakyProxy],
) -> None:
    host, port = client.service_client.config.target_host.rsplit(":", 1)
    temporal = _proxy(proxy_to, host, int(port))
    # The SDK may retry the cut start until the start's bound: keep the bound short.
    settings = a2a_settings.replace(
        temporal={"address": f"127.0.0.1:{temporal.port}", "start_timeout_seconds": 3.0}
    )
    # The app connects through the proxy at start-up; the worker keeps the suite's client.
    async with _serve(client, settings, a2a_parts, inject=False) as live:
        secret = token(live, name("ops"), "runs:start", "runs:read", "runs:cancel")
        async with http(live, secret) as api:
            waiting = await start(api, "helper", REFUND)
            await wait_status(api, waiting["run_id"], "WAITING_FOR_APPROVAL")
            temporal.cut()
            status, kind, message, headers = await _start(live)
            cancel = await api.post(f"/runs/{waiting['run_id']}/cancel", json={})
            # A run with a row reads from the store; one without needs Temporal to say
            # whether it is STARTING: not a 404 that tells a waiting client it is gone.
            stored = await api.get(f"/runs/{waiting['run_id']}")
            unsure = await api.get(f"/runs/{uuid.uuid4()}")
            # Temporal back, the client sends its start again under its own run id: one run.
            run_id = str(uuid.uuid4())
            body = {"profile": "helper", "prompt": LOOKUP, "run_id": run_id}
            refused = await api.post("/runs", json=body)
            temporal.restore()
            for _ in range(10):  # as a client does: again while the API says 503
                retried = await api.post("/runs", json=body)
                if retried.status_code != 503:
                    break
                await asyncio.sleep(1.0)
            done = await wait_status(api, run_id, "COMPLETED")
    assert (status, kind) == (503, "temporal_unavailable"), message
    assert headers["retry-after"] == "1"
    assert str(temporal.port) not in message  # callers are not told the address
    assert cancel.status_code == 503, cancel.text  # the facade's cancel, typed the same
    assert error_type(cancel) == "temporal_unavailable"
    assert str(temporal.port) not in cancel.text
    assert stored.status_code == 200, stored.text
    assert (unsure.status_code, error_type(unsure)) == (503, "temporal_unavailable"), unsure.text
    assert str(temporal.port) not in unsure.text
    assert refused.status_code == 503, refused.text
    assert retried.status_code in (200, 201), retried.text  # 200: the first had been accepted
    assert retried.json()["run_id"] == run_id and done["answer"]


@pytest.mark.skipif(
    backend() != "postgres", reason="SQLite is a file opened in-process: nothing to cut"
)
async def test_a_read_with_the_database_gone_is_503_store_unavailable(
    client: Client,
    a2a_settings: ApiSettings,
    a2a_parts: WorkerResources,
    proxy_to: list[FlakyProxy],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = make_url(a2a_settings.database.resolved_url())
    database = _proxy(proxy_to, url.host or "127.0.0.1", url.port or 5432)
    through = url.set(host="127.0.0.1", port=database.port)
    settings = a2a_settings.replace(database={"url": through.render_as_string(hide_password=False)})
    metrics = ApiMetrics()
    async with _serve(client, settings, a2a_parts, metrics=metrics) as live:
        secret = token(live, name("reader"), "runs:read")  # written directly, not via proxy
        assert metrics.registry.get_sample_value("agentrt_store_up") == 1
        with caplog.at_level(logging.WARNING, logger="agentrt.api"):
            database.cut()
            async with http(live, secret) as api:
                reply = await api.get("/runs")
            # Push delivery noticed (one line), then went on failing round after round: each
            # of those rounds would have said it again.
            ticks = watch(monkeypatch, PushDelivery, "tick")

            async def paused() -> bool:
                return any(
                    r.getMessage().startswith("push delivery paused") for r in caplog.records
                )

            await until(paused, "push delivery paused")
            mark = len(ticks.raised)
            await ticks.until(lambda c: len(c.raised) >= mark + 2, "two more failed rounds")
            # What the AgentrtStoreUnavailable alert reads, and the 503 by route template.
            down = await asyncio.to_thread(metrics.registry.get_sample_value, "agentrt_store_up")
    assert down == 0
    refused = {"method": "GET", "route": "/runs", "status": "503"}
    assert metrics.registry.get_sample_value("agentrt_api_requests_total", refused) == 1
    assert reply.status_code == 503, reply.text
    assert error_type(reply) == "store_unavailable"
    assert str(database.port) not in reply.text
    # The outage is a line each for the operator, not a traceback every poll.
    delivery = [r for r in caplog.records if r.name == "agentrt.api.a2a.delivery"]
    assert [r.getMessage().split(":")[0] for r in delivery] == ["push delivery paused"]
    assert all(r.exc_info is None for r in caplog.records if r.name.startswith("agentrt.api"))


async def test_the_cli_client_retries_a_start_through_an_outage_without_a_second_run(
    client: Client,
    a2a_settings: ApiSettings,
    a2a_parts: WorkerResources,
    proxy_to: list[FlakyProxy],
) -> None:
    """`agentrt --api URL start` while Temporal is away: it sends the start again under the
    same run id until Temporal is back, and one run is started."""
    host, port = client.service_client.config.target_host.rsplit(":", 1)
    temporal = _proxy(proxy_to, host, int(port))
    settings = a2a_settings.replace(
        temporal={"address": f"127.0.0.1:{temporal.port}", "start_timeout_seconds": 2.0}
    )
    async with _serve(client, settings, a2a_parts, inject=False) as live:
        alice = name("alice")
        secret = token(live, alice, "runs:start", "runs:read")
        temporal.cut()
        # Back after the first start has run out its bound (2 s) and answered 503.
        back = asyncio.get_running_loop().call_later(4.0, temporal.restore)
        try:
            async with remote.api_session(live.url, secret) as api:
                run_id = await api.start("helper", LOOKUP)
        finally:
            back.cancel()
        async with http(live, secret) as reader:
            done = await wait_status(reader, run_id, "COMPLETED")
            mine = (await reader.get("/runs", params={"initiator": alice})).json()["runs"]
    assert done["answer"]
    assert [r["run_id"] for r in mine] == [run_id]
