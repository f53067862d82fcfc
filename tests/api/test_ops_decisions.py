"""Operator API decisions and cancels over real HTTP: the decider and the cancel actor are
the token's principal, four-eyes compares principals, every decision is audited with its
principal and digest, and each refusal is a typed 4xx that changes nothing."""

from agentrt.store.demo import DemoWorld
from tests.api.conftest import Live
from tests.api.ops_helpers import (
    REFUND,
    approve,
    error_type,
    http,
    name,
    start,
    token,
    wait_status,
    waiting_for_approval,
)


async def test_four_eyes_by_principal_then_approve_audited_with_the_principal(live: Live) -> None:
    alice, bob = name("alice"), name("bob")
    initiator = token(live, alice, "runs:start", "runs:read", "runs:decide")
    approver = token(live, bob, "runs:read", "runs:read-all", "runs:decide")
    async with http(live, initiator) as as_alice, http(live, approver) as as_bob:
        run_id, digest = await waiting_for_approval(as_alice, "guarded")
        mine = await approve(as_alice, run_id, digest)
        assert mine.status_code == 403 and error_type(mine) == "self_approval"
        # A body that names someone else is refused before anything (the principal decides).
        forged = await as_alice.post(
            f"/runs/{run_id}/decision",
            json={"verdict": "approve", "turn_digest": digest, "decided_by": bob},
        )
        assert forged.status_code == 422 and error_type(forged) == "unknown_fields"
        assert "unknown field decided_by" in forged.json()["error"]["message"]
        assert (await as_alice.get(f"/runs/{run_id}")).json()["status"] == "WAITING_FOR_APPROVAL"

        inbox = (await as_bob.get("/inbox", params={"limit": 200})).json()
        item = next(r for r in inbox if r["run_id"] == run_id)
        call = item["pending_approval"]["calls"][0]
        # The guarded profile keeps metadata only: the call's name, not its arguments.
        assert call["name"] == "issue_refund" and item["privacy"] == "metadata"
        assert call["arguments"] is None and call["arguments_size"] == 3

        stale = await as_bob.post(
            f"/runs/{run_id}/decision", json={"verdict": "approve", "turn_digest": "0" * 64}
        )
        assert stale.status_code == 409 and error_type(stale) == "stale_turn"
        ok = await as_bob.post(
            f"/runs/{run_id}/decision",
            json={"verdict": "approve", "turn_digest": digest, "reason": "checked"},
        )
        assert ok.status_code == 200, ok.text
        assert ok.json()["decided_by"] == bob
        done = await wait_status(as_bob, run_id, "COMPLETED")
        assert done["answer"]
        again = await approve(as_bob, run_id, digest)
        assert again.status_code == 409
        events = (await as_bob.get(f"/runs/{run_id}/events")).json()["events"]
    assert DemoWorld(live.parts.ctx).ledger_count(run_id=run_id) == 1  # the write ran once
    audit = [e["payload"] for e in events if e["kind"] == "approval"]
    assert len(audit) == 1
    assert {
        "approved": True,
        "decided_by": bob,
        "authenticated": True,
        "turn_digest": digest,
    }.items() <= audit[0].items()


async def test_inbox_shows_arguments_at_full_privacy_oldest_first_and_deny(live: Live) -> None:
    alice, bob = name("alice"), name("bob")
    async with http(live, token(live, alice, "runs:start", "runs:read", "runs:decide")) as c:
        # The inbox is oldest first by the time a run began to wait: the second starts once
        # the first waits (started together, either may get there first).
        first = (await start(c, "helper", REFUND))["run_id"]
        await wait_status(c, first, "WAITING_FOR_APPROVAL")
        second = (await start(c, "helper", REFUND))["run_id"]
        await wait_status(c, second, "WAITING_FOR_APPROVAL")
        inbox = (await c.get("/inbox")).json()
        assert [r["run_id"] for r in inbox] == [first, second]  # only hers, oldest first
        call = inbox[0]["pending_approval"]["calls"][0]
        assert call["arguments"] == {
            "order_id": "1042", "amount_cents": 4999, "memo": "customer request",
        }  # fmt: skip
        digest = inbox[0]["pending_approval"]["turn_digest"]
        # helper has no four-eyes: the initiator may deny (and approve) her own run.
        denied = await c.post(
            f"/runs/{first}/decision",
            json={"verdict": "deny", "turn_digest": digest, "reason": "too much"},
        )
        assert denied.status_code == 200, denied.text
        await wait_status(c, first, "COMPLETED")
        assert DemoWorld(live.parts.ctx).ledger_count(run_id=first) == 0
        late = await c.post(
            f"/runs/{first}/decision", json={"verdict": "approve", "turn_digest": digest}
        )
        assert late.status_code == 409  # a second decision
        events = (await c.get(f"/runs/{first}/events")).json()["events"]
        audit = next(e["payload"] for e in events if e["kind"] == "approval")
        assert audit["decided_by"] == alice and audit["approved"] is False
        # Bob without runs:read-all sees no one's inbox but his own.
    async with http(live, token(live, bob, "runs:read", "runs:decide")) as as_bob:
        assert (await as_bob.get("/inbox")).json() == []
        hidden = await as_bob.post(
            f"/runs/{second}/decision", json={"verdict": "approve", "turn_digest": digest}
        )
        assert hidden.status_code == 404


async def test_decision_for_a_run_not_waiting_is_409(live: Live) -> None:
    who = name("alice")
    async with http(live, token(live, who, *("runs:start", "runs:read", "runs:decide"))) as c:
        run_id = (await start(c, "helper", "What about order 9?"))["run_id"]
        await wait_status(c, run_id, "COMPLETED")
        reply = await c.post(
            f"/runs/{run_id}/decision", json={"verdict": "approve", "turn_digest": "a" * 64}
        )
        assert reply.status_code == 409 and error_type(reply) == "not_awaiting_approval"
        misspelt = await c.post(
            f"/runs/{run_id}/decision", json={"verdict": "approve", "turn_digets": "a" * 64}
        )
        assert misspelt.status_code == 422 and error_type(misspelt) == "unknown_fields"
        assert "turn_digets (did you mean turn_digest?)" in misspelt.json()["error"]["message"]


async def test_cancel_as_the_principal_then_cancel_again_is_409(live: Live) -> None:
    alice = name("alice")
    async with http(live, token(live, alice, "runs:start", "runs:read", "runs:cancel")) as c:
        run_id = (await start(c, "helper", REFUND))["run_id"]
        await wait_status(c, run_id, "WAITING_FOR_APPROVAL")
        # A body naming who cancels is refused (422, the field named): the principal does.
        named = await c.post(
            f"/runs/{run_id}/cancel", json={"reason": "not today", "by": "someone-else"}
        )
        assert named.status_code == 422 and error_type(named) == "unknown_fields"
        assert named.json()["error"]["message"].startswith("unknown field by; known: reason")
        reply = await c.post(f"/runs/{run_id}/cancel", json={"reason": "not today"})
        assert reply.status_code == 202, reply.text
        assert reply.json()["status"] == "CANCELLED"
        events = (await c.get(f"/runs/{run_id}/events")).json()["events"]
        assert events[-1]["payload"]["by"] == alice  # the principal, not a body field
        again = await c.post(f"/runs/{run_id}/cancel")
        assert again.status_code == 409 and error_type(again) == "run_finished"
        assert (await c.get(f"/runs/{run_id}/events")).json()["events"] == events
    assert DemoWorld(live.parts.ctx).ledger_count(run_id=run_id) == 0
