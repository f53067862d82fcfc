"""Who may answer for an interrupted write (issue 27 item 4). Through the operator API only a
principal holding `runs:reconcile` who may see the run; straight to Temporal (the stock
CLI, Temporal Web, anyone who can reach the frontend) no answer counts: it carries no
attestation of its principal, so the recording activity refuses it and the run waits on,
with no audit event and nothing done to the write."""

import pytest
from temporalio.client import WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError

from agentrt.contracts.enums import EventKind, RunStatus
from agentrt.contracts.errors import ErrorType
from agentrt.contracts.ids import UPDATE_RECONCILE
from agentrt.contracts.reconcile_answer import ReconcileAnswer, ReconcileOutcome
from agentrt.store.demo import DemoWorld
from tests.api._reconcile import MakeLive, answer_of, awaiting
from tests.api.ops_helpers import error_type, http, name, token, wait_status

WAITING = RunStatus.AWAITING_RECONCILIATION.value


@pytest.mark.timeout(180)
async def test_an_answer_needs_the_scope_and_sight_of_the_run(
    make_live: MakeLive,
) -> None:
    async with awaiting(make_live) as (live, client, run_id, run):
        body = answer_of(run, "give_up")
        url = f"/runs/{run_id}/reconcile"
        for secret in (None, "agrt_nope_nope"):
            async with http(live, secret) as c:
                reply = await c.post(url, json=body)
                assert reply.status_code == 401 and error_type(reply) == "unauthorized"
        # Every other scope, runs:read-all and runs:decide included, is not enough.
        others = ("runs:start", "runs:read", "runs:read-all", "runs:decide", "runs:cancel")
        async with http(live, token(live, name("decider"), *others)) as c:
            reply = await c.post(url, json=body)
            assert reply.status_code == 403 and error_type(reply) == "forbidden"
            assert "runs:reconcile" in reply.json()["error"]["message"]
        # The scope without sight of the run (it started none): the run does not exist.
        async with http(live, token(live, name("blind"), "runs:reconcile")) as c:
            reply = await c.post(url, json=body)
            assert reply.status_code == 404 and error_type(reply) == "run_not_found"
        # A malformed answer is refused before anything is sent.
        reply = await client.post(url, json=answer_of(run, "applied"))  # no result text
        assert reply.status_code in (400, 422), reply.text
        still = await wait_status(client, run_id, WAITING)
        assert still["pending_write"] == run["pending_write"]
        events = await live.runtime.events(run_id)
    assert EventKind.RECONCILED not in [e.kind for e in events]


@pytest.mark.timeout(180)
async def test_an_answer_sent_straight_to_temporal_does_not_count(
    make_live: MakeLive,
) -> None:
    async with awaiting(make_live) as (live, client, run_id, run):
        handle = live.runtime.client.get_workflow_handle(run_id)
        write = run["pending_write"]
        for attestation in (None, "0" * 64):
            forged = ReconcileAnswer(
                call_id=write["call_id"], fence=write["fence"], answer="applied",
                result="Refund done.", answered_by="ops-lead", attestation=attestation,
            )  # fmt: skip
            with pytest.raises(WorkflowUpdateFailedError) as err:
                await handle.execute_update(UPDATE_RECONCILE, forged, result_type=ReconcileOutcome)
            cause = err.value.cause
            assert isinstance(cause, ApplicationError)
            assert cause.type == ErrorType.UNATTESTED_RECONCILIATION.value
            await wait_status(client, run_id, WAITING)
        # The run waits on: the real operator's answer still counts.
        reply = await client.post(
            f"/runs/{run_id}/reconcile", json=answer_of(run, "not_applied", then="retry")
        )
        assert reply.status_code == 200, reply.text
        await wait_status(client, run_id, "COMPLETED", seconds=30)
        events = await live.runtime.events(run_id)
    audits = [e for e in events if e.kind is EventKind.RECONCILED]
    assert len(audits) == 1 and audits[0].payload["answered_by"] != "ops-lead"
    assert audits[0].payload["answer"] == "not_applied"
    assert DemoWorld(live.parts.ctx).ledger_count(run_id=run_id) == 1
