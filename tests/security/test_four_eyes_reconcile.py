"""Four-eyes covers answers on an interrupted write (issue 41 L2). On cf842b3 the initiator of
a four-eyes run answered "not applied, retry" on their own run, twice, and one approval by
another person ran the write three times. Now, where the profile has four-eyes, the run's
initiator may not answer "not applied" at all (a re-execution, or an error in the write's
place, on their word alone), and a re-execution needs the answer of someone other than the
person who approved the write: each refused 403, the run still waiting, nothing run again.
Through the Python API, attested with the seal key, the same (the workflow decides)."""

import pytest

from agentrt.contracts.enums import EventKind, RunStatus
from agentrt.contracts.errors import ApproverReconciliationError, SelfReconciliationError
from agentrt.store.demo import DemoWorld
from tests.api._reconcile import ASKED_WITHIN, MakeLive, answer_of
from tests.api.ops_helpers import REFUND, error_type, http, name, start, token, wait_status
from tests.conftest import UnknownOutcome

WAITING = RunStatus.AWAITING_RECONCILIATION.value
PROFILE = "asker-four-eyes"  # tests/api/fixtures/profiles.yaml


@pytest.mark.timeout(180)
async def test_neither_initiator_nor_approver_releases_a_re_execution(
    make_live: MakeLive,
) -> None:
    alice, bob, carol = name("alice"), name("bob"), name("carol")
    async with make_live(UnknownOutcome()) as live:
        seen = ("runs:read", "runs:read-all", "runs:reconcile")
        as_alice_key = token(live, alice, "runs:start", "runs:decide", *seen)
        as_bob_key = token(live, bob, "runs:decide", *seen)
        async with (
            http(live, as_alice_key) as as_alice,
            http(live, as_bob_key) as as_bob,
            http(live, token(live, carol, *seen)) as as_carol,
        ):
            run_id = (await start(as_alice, PROFILE, REFUND))["run_id"]
            waiting = await wait_status(as_alice, run_id, "WAITING_FOR_APPROVAL")
            digest = waiting["pending_approval"]["turn_digest"]
            body = {"verdict": "approve", "turn_digest": digest}
            approved = await as_bob.post(f"/runs/{run_id}/decision", json=body)
            assert approved.status_code == 200, approved.text
            run = await wait_status(as_alice, run_id, WAITING, seconds=ASKED_WITHIN)
            url = f"/runs/{run_id}/reconcile"

            for then in ("retry", "error"):  # the initiator: neither way
                mine = await as_alice.post(url, json=answer_of(run, "not_applied", then=then))
                assert mine.status_code == 403, mine.text
                assert error_type(mine) == "self_reconciliation"
            approvers = await as_bob.post(url, json=answer_of(run, "not_applied", then="retry"))
            assert (
                approvers.status_code == 403 and error_type(approvers) == "approver_reconciliation"
            )
            # The Python API, attested with the seal key: the workflow refuses the same.
            write = run["pending_write"]
            with pytest.raises(SelfReconciliationError):
                await live.runtime.reconcile(
                    run_id, call_id=write["call_id"], fence=write["fence"],
                    answer="not_applied", answered_by=alice,
                )  # fmt: skip
            with pytest.raises(ApproverReconciliationError):
                await live.runtime.reconcile(
                    run_id, call_id=write["call_id"], fence=write["fence"],
                    answer="not_applied", answered_by=bob,
                )  # fmt: skip
            still = await wait_status(as_alice, run_id, WAITING)
            assert still["pending_write"] == run["pending_write"]
            assert DemoWorld(live.parts.ctx).ledger_count(run_id=run_id) == 0

            # A third person's "not applied, retry" counts: the refund runs again, once.
            ok = await as_carol.post(url, json=answer_of(run, "not_applied", then="retry"))
            assert ok.status_code == 200, ok.text
            await wait_status(as_carol, run_id, "COMPLETED", seconds=30)
        events = await live.runtime.events(run_id)
    [audit] = [e.payload for e in events if e.kind is EventKind.RECONCILED]
    assert audit["answered_by"] == carol and audit["answer"] == "not_applied"
    assert DemoWorld(live.parts.ctx).ledger_count(run_id=run_id) == 1


@pytest.mark.timeout(180)
async def test_applied_and_give_up_run_nothing_and_anyone_may_say_them(
    make_live: MakeLive,
) -> None:
    """As anyone may deny: an answer that runs nothing again is the initiator's to give."""
    alice, bob = name("alice"), name("bob")
    async with make_live(UnknownOutcome()) as live:
        seen = ("runs:read", "runs:read-all", "runs:reconcile")
        async with (
            http(live, token(live, alice, "runs:start", *seen)) as as_alice,
            http(live, token(live, bob, "runs:decide", *seen)) as as_bob,
        ):
            run_id = (await start(as_alice, PROFILE, REFUND))["run_id"]
            waiting = await wait_status(as_alice, run_id, "WAITING_FOR_APPROVAL")
            body = {"verdict": "approve", "turn_digest": waiting["pending_approval"]["turn_digest"]}
            assert (await as_bob.post(f"/runs/{run_id}/decision", json=body)).status_code == 200
            run = await wait_status(as_alice, run_id, WAITING, seconds=ASKED_WITHIN)
            answer = answer_of(run, "applied", result="Refund R-1 issued (checked).")
            ok = await as_alice.post(f"/runs/{run_id}/reconcile", json=answer)
            assert ok.status_code == 200, ok.text
            await wait_status(as_alice, run_id, "COMPLETED", seconds=30)
    assert DemoWorld(live.parts.ctx).ledger_count(run_id=run_id) == 0
