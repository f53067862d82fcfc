"""Temporal Web's codec on the operator API (issue 28) decodes only for a signed-in
operator's session cookie whose token is active and holds `payloads:decode`, for this
deployment's namespace; every decode and refusal is audited by principal and namespace.
A bearer token alone, a forged or ended session, another namespace: refused."""

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest
import pytest_asyncio
from temporalio.testing import WorkflowEnvironment

from agentrt.api.operator.codec import COOKIE
from agentrt.api.settings import ApiSettings
from agentrt.store.principals import PrincipalStore
from agentrt.workers.compose import WorkerResources
from tests.api.codec_helpers import keyed_live, opened, sealed_body
from tests.api.conftest import (  # noqa: F401  (fixtures)
    Live,
    a2a_parts,
    a2a_settings,
)
from tests.api.ops_helpers import name, token

UI = "http://127.0.0.1:8233"
NS = {"X-Namespace": "default", "Content-Type": "application/json"}


@pytest_asyncio.fixture
async def live(
    temporal_env: WorkflowEnvironment,
    a2a_settings: ApiSettings,  # noqa: F811
    a2a_parts: WorkerResources,  # noqa: F811
) -> AsyncIterator[Live]:
    address = temporal_env.client.service_client.config.target_host
    async with keyed_live(address, a2a_settings, a2a_parts, UI) as served:
        yield served


@asynccontextmanager
async def _signed_in(live: Live, secret: str) -> AsyncIterator[httpx.AsyncClient]:
    """A browser's cookie jar after the approvals page signed in with `secret`."""
    async with httpx.AsyncClient(base_url=live.url, timeout=30) as http:
        reply = await http.post("/me/session", headers={"Authorization": f"Bearer {secret}"})
        assert reply.status_code == 204, reply.text
        cookie = reply.headers["set-cookie"]
        for attribute in ("HttpOnly", "SameSite=strict", "Path=/codec"):
            assert attribute.lower() in cookie.lower(), cookie
        yield http


async def test_a_signed_in_operator_decodes_and_is_audited(
    live: Live, caplog: pytest.LogCaptureFixture
) -> None:
    alice = name("alice")
    async with _signed_in(live, token(live, alice, "runs:read", "payloads:decode")) as http:
        with caplog.at_level(logging.INFO, logger="agentrt.audit"):
            reply = await http.post("/codec/decode", content=await sealed_body("hi"), headers=NS)
        assert reply.status_code == 200, reply.text
        assert opened(reply.json()) == "hi"
        # The CLI's path form too.
        reply = await http.post(
            "/codec/default/decode", content=await sealed_body("yo"), headers=NS
        )
        assert opened(reply.json()) == "yo"
    decoded = [r for r in caplog.records if getattr(r, "outcome", "") == "decoded"]
    assert decoded and decoded[0].principal == alice  # type: ignore[attr-defined]
    assert decoded[0].namespace == "default"  # type: ignore[attr-defined]


async def test_nobody_else_decodes(live: Live, caplog: pytest.LogCaptureFixture) -> None:
    body = await sealed_body("secret prompt")
    alice_secret = token(live, name("alice"), "payloads:decode")
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
    async with _signed_in(live, token(live, eve, "runs:read-all")) as as_eve:
        reply = await as_eve.post("/codec/decode", content=body, headers=NS)
        assert reply.status_code == 403 and "payloads:decode" in reply.text
        assert "secret prompt" not in reply.text

    # Another namespace, then signed out, then the token revoked under a live session.
    async with _signed_in(live, alice_secret) as as_alice:
        other = {**NS, "X-Namespace": "other"}
        assert (
            await as_alice.post("/codec/decode", content=body, headers=other)
        ).status_code == 403
        cookie = as_alice.cookies.get(COOKIE)
        assert (await as_alice.delete("/codec/session")).status_code == 204
        as_alice.cookies.set(COOKIE, str(cookie), path="/codec")  # a copy kept: still ended
        assert (await as_alice.post("/codec/decode", content=body, headers=NS)).status_code == 401
    async with _signed_in(live, alice_secret) as as_alice:
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
