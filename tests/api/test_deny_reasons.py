"""A denial needs a reason on every path (issue 40 item 6), as the approvals page always
required: the operator API (400 `reason_required`), the Python client and the HTTP client
(ReasonRequiredError, before anything is sent), the run's own `decide` update (refused by
its validator, ApplicationError type ReasonRequired) and `approve` signal (kept in
`refused_decisions`). Each refusal changes nothing: the run still waits. The denial that
gives one records it on the APPROVAL event, where the timeline shows it; the histories
replay (the signal's refusal is behind a patch). The CLI: tests/starter/test_cli_decisions.py."""

import asyncio

import pytest
from temporalio.client import WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError

from agentrt.contracts.approval import ApprovalDecision
from agentrt.contracts.errors import ReasonRequiredError
from agentrt.contracts.ids import SIGNAL_APPROVE, UPDATE_DECIDE
from agentrt.starter import remote
from tests.api.conftest import Live
from tests.api.ops_helpers import error_type, wait_status, waiting_refund
from tests.workflows._replay import assert_replays, fetch


async def test_a_denial_without_a_reason_is_refused_on_every_path(live: Live) -> None:
    async with waiting_refund(live, "dora") as run:
        api, who, secret, run_id, digest = run.api, run.who, run.secret, run.run_id, run.digest
        # The operator API: 400, typed, for an absent, empty or blank reason.
        for extra in ({}, {"reason": None}, {"reason": ""}, {"reason": " \n "}):
            body = {"verdict": "deny", "turn_digest": digest, **extra}
            refused = await api.post(f"/runs/{run_id}/decision", json=body)
            assert (refused.status_code, error_type(refused)) == (400, "reason_required")
        # The Python client and the HTTP client refuse before sending.
        with pytest.raises(ReasonRequiredError, match="a denial needs a reason"):
            await live.runtime.approve(run_id, approved=False, decided_by=who, turn_digest=digest)
        async with remote.api_session(live.url, secret) as over_http:
            with pytest.raises(ReasonRequiredError):
                await over_http.approve(
                    run_id, approved=False, decided_by=who, turn_digest=digest, reason="  "
                )
        # Straight to Temporal: the update's validator, then the signal.
        handle = live.runtime.client.get_workflow_handle(run_id)
        bare = ApprovalDecision(approved=False, decided_by=who, turn_digest=digest)
        with pytest.raises(WorkflowUpdateFailedError) as failed:
            await handle.execute_update(UPDATE_DECIDE, bare)
        assert isinstance(failed.value.cause, ApplicationError)
        assert failed.value.cause.type == "ReasonRequired"
        await handle.signal(SIGNAL_APPROVE, bare)
        refused = await _refused(live, run_id)
        assert [r.refusal for r in refused] == ["ReasonRequired"]
        assert "gives no reason" in refused[0].message
        assert (await api.get(f"/runs/{run_id}")).json()["status"] == "WAITING_FOR_APPROVAL"

        # With a reason, it is taken, and the audit keeps it.
        ok = await api.post(
            f"/runs/{run_id}/decision",
            json={"verdict": "deny", "turn_digest": digest, "reason": "over the limit"},
        )
        assert ok.status_code == 200, ok.text
        await wait_status(api, run_id, "COMPLETED")
        events = (await api.get(f"/runs/{run_id}/events")).json()["events"]
    [decision] = [e["payload"] for e in events if e["kind"] == "approval"]
    assert decision["approved"] is False and decision["reason"] == "over the limit"
    assert decision["decided_by"] == who and decision["authenticated"] is True
    await assert_replays(await fetch(live.runtime.client, run_id))


async def _refused(live: Live, run_id: str) -> list[object]:
    for _ in range(200):
        refused = await live.runtime.refused_decisions(run_id)
        if refused:
            return list(refused)
        await asyncio.sleep(0.05)
    raise AssertionError("the signal's denial was never refused")
