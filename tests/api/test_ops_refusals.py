"""Operator API bad input: each a typed 4xx JSON error that changes nothing."""

from datetime import timedelta

from sqlalchemy import update

from agentrt.store.db.context import utcnow
from agentrt.store.security.principals import PrincipalStore, TokenRow
from tests.api.conftest import Live
from tests.api.ops_helpers import (
    LOOKUP,
    approve,
    error_type,
    http,
    name,
    start,
    token,
    waiting_for_approval,
)


async def _count(live: Live, who: str) -> int:
    async with http(live, token(live, name("auditor"), "runs:read-all")) as c:
        listed = await c.get("/runs", params={"initiator": who, "limit": 200})
    return len(listed.json()["runs"])


async def test_missing_unknown_expired_and_revoked_tokens_are_401(live: Live) -> None:
    who = name("alice")
    store = PrincipalStore(live.parts.ctx)
    expired_info, expired = store.create(
        who, ["runs:start"], expires_at=utcnow() + timedelta(hours=1)
    )
    with live.parts.ctx.sessions.begin() as s:  # its hour has passed
        s.execute(
            update(TokenRow)
            .where(TokenRow.id == expired_info.id)
            .values(expires_at=utcnow() - timedelta(seconds=1))
        )
    revoked_info, revoked = store.create(who, ["runs:start"])
    assert store.revoke(revoked_info.id) and not store.revoke(revoked_info.id)
    body = {"profile": "helper", "prompt": LOOKUP}
    for secret in (None, "agrt_nope_nope", expired, revoked, "alice-key-4f1c2a9d"):
        async with http(live, secret) as c:
            reply = await c.post("/runs", json=body)
            assert reply.status_code == 401, (secret, reply.text)
            assert error_type(reply) == "unauthorized"
            assert reply.headers["www-authenticate"].startswith("Bearer")
            assert (await c.get("/inbox")).status_code == 401
    assert await _count(live, who) == 0


async def test_a_token_without_the_scope_is_403_and_changes_nothing(live: Live) -> None:
    alice = name("alice")
    reader = token(live, alice, "runs:read")
    async with http(live, token(live, alice, "runs:start", "runs:read")) as c:
        run_id, digest = await waiting_for_approval(c, "helper")
        decide = await approve(c, run_id, digest)
        assert decide.status_code == 403 and error_type(decide) == "forbidden"
        cancel = await c.post(f"/runs/{run_id}/cancel")
        assert cancel.status_code == 403
    async with http(live, reader) as c:
        refused = await c.post("/runs", json={"profile": "helper", "prompt": LOOKUP})
        assert refused.status_code == 403 and "runs:start" in refused.json()["error"]["message"]
        assert (await c.get(f"/runs/{run_id}")).json()["status"] == "WAITING_FOR_APPROVAL"
    async with http(live, token(live, name("nobody"), "runs:start")) as c:
        assert (await c.get("/runs")).status_code == 403
    assert await _count(live, alice) == 1
    # admin holds every scope: it may cancel alice's run.
    async with http(live, token(live, name("root"), "admin")) as c:
        assert (await c.post(f"/runs/{run_id}/cancel")).json()["status"] == "CANCELLED"


async def test_unknown_run_bad_cursor_bad_body_and_oversized_body(live: Live) -> None:
    who = name("alice")
    scopes = ("runs:start", "runs:read", "runs:decide", "runs:cancel")
    async with http(live, token(live, who, *scopes)) as c:
        for path in (
            "/runs/00000000-0000-4000-8000-000000000000",
            "/runs/not-a-uuid",
            "/runs/00000000-0000-4000-8000-000000000000/events",
        ):
            reply = await c.get(path)
            assert reply.status_code == 404 and error_type(reply) == "run_not_found", path
        unknown = "00000000-0000-4000-8000-000000000000"
        decide = await c.post(
            f"/runs/{unknown}/decision", json={"verdict": "approve", "turn_digest": "a"}
        )
        assert decide.status_code == 404
        assert (await c.post(f"/runs/{unknown}/cancel")).status_code == 404
        for cursor in ("garbage!", "e30", "eyJ0IjogMX0"):
            reply = await c.get("/runs", params={"cursor": cursor})
            assert reply.status_code == 400 and error_type(reply) == "bad_cursor", cursor
        bad = await c.post(
            "/runs", content=b"{not json", headers={"content-type": "application/json"}
        )
        assert bad.status_code == 400 and error_type(bad) == "invalid_request"
        verdict = await c.post(
            f"/runs/{unknown}/decision", json={"verdict": "maybe", "turn_digest": "a"}
        )
        assert verdict.status_code == 400
        assert (await c.get("/runs", params={"limit": 0})).status_code == 400
        big = {"profile": "helper", "prompt": "x" * (live.settings.api.max_body_bytes + 10)}
        reply = await c.post("/runs", json=big)
        assert reply.status_code == 413 and error_type(reply) == "payload_too_large"
        chunked = await c.post("/runs", content=_chunks(live.settings.api.max_body_bytes + 10))
        assert chunked.status_code == 413
        resume = await c.get(f"/runs/{unknown}/events", headers={"Accept": "text/event-stream"})
        assert resume.status_code == 404
    assert await _count(live, who) == 0


async def _chunks(size: int):  # type: ignore[no-untyped-def]
    for _ in range(size // 1000 + 1):
        yield b"x" * 1000


async def test_bad_last_event_id_is_400(live: Live) -> None:
    who = name("alice")
    async with http(live, token(live, who, "runs:start", "runs:read")) as c:
        run_id = (await start(c, "helper", LOOKUP))["run_id"]
        reply = await c.get(
            f"/runs/{run_id}/events",
            headers={"Accept": "text/event-stream", "Last-Event-ID": "soon"},
        )
        assert reply.status_code == 400 and error_type(reply) == "bad_last_event_id"
