"""Issue 42 item 3: one route shape for every answer, `POST /runs/{id}/answers`, the body's
`kind` naming which; `/decision`, `/reconcile` and `/resolution` stay as its aliases (their
own tests: test_ops_decisions.py, test_reconcile_answers.py, test_resolution.py). The HTTP
client's `answer` (and `approve`, a thin wrapper over it) posts to it. Scopes per kind:
tests/security/test_answer_update.py."""

from agentrt.contracts.approval import ApprovalDecision
from agentrt.starter import remote
from tests.api.conftest import Live
from tests.api.ops_helpers import error_type, http, wait_status, waiting_refund


async def test_a_decision_through_the_answers_route_is_the_principals(live: Live) -> None:
    async with waiting_refund(live, "ada") as run:
        api, who, secret, run_id, digest = run.api, run.who, run.secret, run.run_id, run.digest
        # No kind, or one that is none: refused, typed, and the run waits on.
        for kind in ({}, {"kind": "verdict"}):
            body = {**kind, "verdict": "approve", "turn_digest": digest}
            refused = await api.post(f"/runs/{run_id}/answers", json=body)
            assert (refused.status_code, error_type(refused)) == (400, "invalid_request")
        # A decision's fields only (the strict body names the stray one).
        stray = {"kind": "decision", "verdict": "approve", "turn_digest": digest, "by": "eve"}
        refused = await api.post(f"/runs/{run_id}/answers", json=stray)
        assert (refused.status_code, error_type(refused)) == (422, "unknown_fields")
        # A denial needs a reason here as on the alias.
        deny = {"kind": "decision", "verdict": "deny", "turn_digest": digest}
        refused = await api.post(f"/runs/{run_id}/answers", json=deny)
        assert (refused.status_code, error_type(refused)) == (400, "reason_required")
        # A stale turn: 409, as on the alias.
        stale = {"kind": "decision", "verdict": "approve", "turn_digest": "f" * 64}
        refused = await api.post(f"/runs/{run_id}/answers", json=stale)
        assert (refused.status_code, error_type(refused)) == (409, "stale_turn")
        assert (await api.get(f"/runs/{run_id}")).json()["status"] == "WAITING_FOR_APPROVAL"

    # The HTTP client's one `answer`: the author it names is not sent; the token's is.
    async with remote.api_session(live.url, secret) as client:
        decision = ApprovalDecision(approved=True, decided_by="somebody-else", turn_digest=digest)
        after = await client.answer(run_id, decision)
        assert client.acted_as == who and after.run_id == run_id
    async with http(live, secret) as api:
        await wait_status(api, run_id, "COMPLETED")
        events = (await api.get(f"/runs/{run_id}/events")).json()["events"]
    [approval] = [e["payload"] for e in events if e["kind"] == "approval"]
    assert approval["decided_by"] == who and approval["authenticated"] is True


async def test_the_answers_route_answers_with_its_kind_and_author(live: Live) -> None:
    async with waiting_refund(live, "ben") as run:
        api, who, run_id = run.api, run.who, run.run_id
        body = {"kind": "decision", "verdict": "deny", "reason": "not today",
                "turn_digest": run.digest}  # fmt: skip
        reply = await api.post(f"/runs/{run_id}/answers", json=body)
        assert reply.status_code == 200, reply.text
        out = reply.json()
        assert out["kind"] == "decision" and out["answered_by"] == who
        assert out["run"]["run_id"] == run_id
        await wait_status(api, run_id, "COMPLETED")
        doc = (await api.get("/openapi.json")).json()
    assert {"/runs/{run_id}/answers", "/runs/{run_id}/decision", "/runs/{run_id}/reconcile",
            "/runs/{run_id}/resolution"} <= set(doc["paths"])  # fmt: skip
