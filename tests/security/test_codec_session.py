"""Temporal Web's codec on the operator API (issue 28) decodes only for a signed-in
operator's session cookie whose token is active and holds `payloads:decode`, for this
deployment's namespace; every decode and refusal is audited by principal and namespace.
A bearer token alone, a forged or ended session, another namespace: refused. Sessions are
shared by every API replica (issue 40): on cf842b3 they lived in one process, and behind
two replicas about half the decodes failed. What a session may decode is
tests/security/test_codec_reads.py's."""

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest
import pytest_asyncio
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from agentrt.api.operator.codec import COOKIE
from agentrt.api.settings import ApiSettings
from agentrt.core.temporal import data_converter
from agentrt.store.security.principals import PrincipalStore
from agentrt.workers.compose import WorkerResources
from tests.api.codec_helpers import PAYLOAD_KEYS, keyed_live, opened, sealed_body
from tests.api.conftest import Live, _serve
from tests.api.ops_helpers import REFUND, http, name, start, token, wait_status

UI = "http://127.0.0.1:8233"
NS = {"X-Namespace": "default", "Content-Type": "application/json"}


@pytest_asyncio.fixture
async def live(
    temporal_env: WorkflowEnvironment,
    a2a_settings: ApiSettings,
    a2a_parts: WorkerResources,
) -> AsyncIterator[Live]:
    address = temporal_env.client.service_client.config.target_host
    async with keyed_live(address, a2a_settings, a2a_parts, UI) as served:
        yield served


@asynccontextmanager
async def signed_in(live: Live, secret: str) -> AsyncIterator[httpx.AsyncClient]:
    """A browser's cookie jar after the approvals page signed in with `secret`."""
    async with httpx.AsyncClient(base_url=live.url, timeout=30) as http:
        reply = await http.post("/me/session", headers={"Authorization": f"Bearer {secret}"})
        assert reply.status_code == 204, reply.text
        cookie = reply.headers["set-cookie"]
        for attribute in ("HttpOnly", "SameSite=strict", "Path=/codec"):
            assert attribute.lower() in cookie.lower(), cookie
        yield http


async def _own_run(live: Live, who: str) -> str:
    """A run `who` started (waiting for approval): one whose payloads they may read."""
    async with http(live, token(live, who, "runs:start", "runs:read")) as client:
        run_id = str((await start(client, "helper", REFUND))["run_id"])
        await wait_status(client, run_id, "WAITING_FOR_APPROVAL")
    return run_id


async def test_a_signed_in_operator_decodes_and_is_audited(
    live: Live, caplog: pytest.LogCaptureFixture
) -> None:
    alice = name("alice")
    run_id = await _own_run(live, alice)
    async with signed_in(live, token(live, alice, "runs:read", "payloads:decode")) as browser:
        with caplog.at_level(logging.INFO, logger="agentrt.audit"):
            reply = await browser.post(
                "/codec/decode", content=await sealed_body("hi", run_id), headers=NS
            )
        assert reply.status_code == 200, reply.text
        assert opened(reply.json()) == "hi"
        # The CLI's path form too.
        reply = await browser.post(
            "/codec/default/decode", content=await sealed_body("yo", run_id), headers=NS
        )
        assert opened(reply.json()) == "yo"
    decoded = [r for r in caplog.records if getattr(r, "outcome", "") == "decoded"]
    assert decoded and decoded[0].principal == alice  # type: ignore[attr-defined]
    assert decoded[0].namespace == "default"  # type: ignore[attr-defined]


async def test_nobody_else_decodes(live: Live, caplog: pytest.LogCaptureFixture) -> None:
    alice = name("alice")
    body = await sealed_body("secret prompt", await _own_run(live, alice))
    alice_secret = token(live, alice, "payloads:decode")
    eve = name("eve")
    async with httpx.AsyncClient(base_url=live.url) as anon:
        with caplog.at_level(logging.INFO, logger="agentrt.audit"):
            # No session; a bearer token (nothing is pasted into Temporal Web); a forgery.
            assert (await anon.post("/codec/decode", content=body, headers=NS)).status_code == 401
            bearer = {**NS, "Authorization": f"Bearer {alice_secret}"}
            assert (
                await anon.post("/codec/decode", content=body, headers=bearer)
            ).status_code == 401
            anon.cookies.set(COOKIE, "forged-session-id", path="/codec")
            assert (await anon.post("/codec/decode", content=body, headers=NS)).status_code == 401
    audited = [r for r in caplog.records if getattr(r, "outcome", "") == "refused"]
    assert len(audited) == 3 and all(r.namespace == "default" for r in audited)  # type: ignore[attr-defined]

    # Signed in, but without the scope.
    async with signed_in(live, token(live, eve, "runs:read-all")) as as_eve:
        reply = await as_eve.post("/codec/decode", content=body, headers=NS)
        assert reply.status_code == 403 and "payloads:decode" in reply.text
        assert "secret prompt" not in reply.text

    # Another namespace, then signed out, then the token revoked under a live session.
    async with signed_in(live, alice_secret) as as_alice:
        other = {**NS, "X-Namespace": "other"}
        assert (
            await as_alice.post("/codec/decode", content=body, headers=other)
        ).status_code == 403
        cookie = as_alice.cookies.get(COOKIE)
        assert (await as_alice.delete("/codec/session")).status_code == 204
        as_alice.cookies.set(COOKIE, str(cookie), path="/codec")  # a copy kept: still ended
        assert (await as_alice.post("/codec/decode", content=body, headers=NS)).status_code == 401
    async with signed_in(live, alice_secret) as as_alice:
        assert (await as_alice.post("/codec/decode", content=body, headers=NS)).status_code == 200
        store = PrincipalStore(live.parts.ctx)
        for info in store.list():
            if info.principal.startswith("alice-"):
                store.revoke(info.id)
        assert (await as_alice.post("/codec/decode", content=body, headers=NS)).status_code == 401


async def test_cors_admits_the_web_ui_origin_with_credentials_only(live: Live) -> None:
    preflight = {"Access-Control-Request-Method": "POST",
                 "Access-Control-Request-Headers": "content-type,x-namespace"}  # fmt: skip
    async with httpx.AsyncClient(base_url=live.url) as http:
        ok = await http.options("/codec/decode", headers={"Origin": UI, **preflight})
        assert ok.status_code == 200
        assert ok.headers["access-control-allow-origin"] == UI
        assert ok.headers["access-control-allow-credentials"] == "true"
        evil = await http.options(
            "/codec/decode", headers={"Origin": "http://evil.example", **preflight}
        )
        assert "access-control-allow-origin" not in evil.headers


async def test_a_session_holds_on_every_replica_and_a_sign_out_ends_it_on_all(
    live: Live,
    temporal_env: WorkflowEnvironment,
    a2a_parts: WorkerResources,
) -> None:
    """Two API replicas over one database, as deploy/k8s/api.yaml runs them: a browser
    signs in on one, and its decodes reach either; it signs out on the other, and the
    first refuses the cookie too."""
    alice = name("alice")
    body = await sealed_body("on every replica", await _own_run(live, alice))
    client = await Client.connect(
        temporal_env.client.service_client.config.target_host,
        data_converter=data_converter(PAYLOAD_KEYS),
    )
    async with (
        _serve(client, live.settings, a2a_parts) as other,
        signed_in(live, token(live, alice, "runs:read", "payloads:decode")) as first,
        httpx.AsyncClient(base_url=other.url) as second,
    ):
        cookie = str(first.cookies.get(COOKIE))
        second.cookies.set(COOKIE, cookie, path="/codec")
        for replica in (first, second, first, second):
            reply = await replica.post("/codec/decode", content=body, headers=NS)
            assert reply.status_code == 200, reply.text
            assert opened(reply.json()) == "on every replica"
        assert (await second.delete("/codec/session")).status_code == 204
        first.cookies.set(COOKIE, cookie, path="/codec")  # a copy kept: ended everywhere
        assert (await first.post("/codec/decode", content=body, headers=NS)).status_code == 401
