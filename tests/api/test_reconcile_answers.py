"""Issue 27 item 4: `on_unknown_outcome: ask`. A write whose outcome stays unknown (the
refund claimed, then its worker's fault hook raises before the effect; the probe's target
is down) puts the run in AWAITING_RECONCILIATION, holding no worker; an operator answers
through the operator API as a real principal. Over real HTTP, a real Temporal dev server
and the suite's database. SIGKILLed workers: tests/fence/test_ask_kill.py; refusals by
scope and attestation: tests/security/test_reconcile_access.py."""

import asyncio

import pytest
from prometheus_client import generate_latest

from agentrt.contracts.enums import EventKind, PendingState, RunStatus
from agentrt.contracts.errors import ErrorType, ReconcileError
from agentrt.contracts.views import EventView
from agentrt.core.metrics import new_registry
from agentrt.starter.cli import main as cli_main
from agentrt.store.demo import DemoWorld
from agentrt.store.ops.gauges import watch_store
from agentrt.workflows._context import STATUS_KEY
from tests.api._reconcile import MakeLive, answer_of, answer_taken, awaiting
from tests.api.ops_helpers import error_type, http, name, token, wait_status
from tests.workflows._replay import assert_replays, patches


def refunds(events: list[EventView]) -> list[EventView]:
    return [e for e in events if e.kind is EventKind.TOOL and e.payload["tool"] == "issue_refund"]


@pytest.mark.timeout(180)
async def test_applied_the_run_goes_on_with_the_operators_result(make_live: MakeLive) -> None:
    async with awaiting(make_live) as (live, client, run_id, run):
        # What the operator needs, and why the run is listed as needing attention.
        write = run["pending_write"]
        assert write["tool"] == "issue_refund" and write["fence"]
        assert write["state"] == PendingState.OUTCOME_UNKNOWN.value
        assert run["attention"] == "awaiting_reconciliation"
        listed = (await client.get("/attention", params={"limit": 200})).json()
        assert run_id in [r["run_id"] for r in listed]
        # The wait holds no worker: no activity is pending, the workflow waits on a timer.
        desc = await live.runtime.client.get_workflow_handle(run_id).describe()
        assert desc.raw_description.pending_activities == []
        # Temporal Web shows it: the status search attribute and the current details.
        assert desc.typed_search_attributes.get(STATUS_KEY) == "AWAITING_RECONCILIATION"
        meta = await live.runtime.client.get_workflow_handle(run_id).query(
            "__temporal_workflow_metadata"
        )
        assert "awaiting reconciliation" in meta.current_details
        # The gauge counts it, from the store.
        registry = new_registry()
        watch_store(registry, live.parts.ctx)
        scraped = generate_latest(registry).decode()
        gauge = next(
            line for line in scraped.splitlines()
            if line.startswith("agentrt_runs_awaiting_reconciliation ")
        )  # fmt: skip
        assert float(gauge.split()[1]) >= 1

        text = "Refund R-77 was issued on the ledger (checked by ops)."
        reply = await client.post(
            f"/runs/{run_id}/reconcile", json=answer_of(run, "applied", result=text)
        )
        assert reply.status_code == 200, reply.text
        done = await wait_status(client, run_id, "COMPLETED", seconds=30)
        events = await live.runtime.events(run_id)
    assert reply.json()["answered_by"].startswith("ops-")
    assert done["pending_write"] is None
    refund = next(
        e for e in events if e.kind is EventKind.TOOL and e.payload["tool"] == "issue_refund"
    )
    assert refund.payload["result"] == text and refund.payload["reconciled"] is True
    audit = next(e for e in events if e.kind is EventKind.RECONCILED)
    assert audit.payload["answer"] == "applied"
    assert audit.payload["answered_by"] == reply.json()["answered_by"]
    assert EventKind.RECONCILE_REQUESTED in [e.kind for e in events]
    # The operator said it was applied; nothing ran it again.
    assert DemoWorld(live.parts.ctx).ledger_count(run_id=run_id) == 0


@pytest.mark.timeout(180)
async def test_not_applied_retries_the_write_once(make_live: MakeLive) -> None:
    live, run_id, done, events = await answer_taken(
        make_live, "not_applied", "COMPLETED", then="retry"
    )
    assert "refunded" in (done["answer"] or "")
    assert DemoWorld(live.parts.ctx).ledger_count(run_id=run_id) == 1
    # A run of this build takes the path with no patch marker; the history replays.
    history = await live.runtime.client.get_workflow_handle(run_id).fetch_history()
    assert patches(history.events) == []
    await assert_replays(history)
    [refund] = refunds(events)
    assert not refund.payload["is_error"]


@pytest.mark.timeout(180)
async def test_not_applied_as_an_error_result_to_the_model(make_live: MakeLive) -> None:
    live, run_id, _, events = await answer_taken(
        make_live, "not_applied", "COMPLETED", "FAILED", then="error", result="The bank refused it."
    )
    [refund] = refunds(events)
    assert refund.payload["is_error"] is True
    assert refund.payload["result"] == "The bank refused it."
    assert DemoWorld(live.parts.ctx).ledger_count(run_id=run_id) == 0


@pytest.mark.timeout(180)
async def test_give_up_fails_the_run_interrupted_write(make_live: MakeLive) -> None:
    live, run_id, failed, events = await answer_taken(
        make_live, "give_up", "FAILED", reason="cannot tell"
    )
    assert failed["termination_reason"] == "interrupted_write"
    assert events[-1].payload["error_type"] == ErrorType.RECONCILE_GIVEN_UP.value
    assert failed["pending_write"]["state"] == PendingState.OUTCOME_UNKNOWN.value  # evidence
    audit = next(e for e in events if e.kind is EventKind.RECONCILED)
    assert audit.payload["answer"] == "give_up" and audit.payload["reason"] == "cannot tell"
    await assert_replays(await live.runtime.client.get_workflow_handle(run_id).fetch_history())


@pytest.mark.timeout(180)
async def test_two_operators_at_once_one_wins_and_stale_answers_are_refused(
    make_live: MakeLive,
) -> None:
    async with awaiting(make_live) as (live, client, run_id, run):
        stale = answer_of(run, "give_up") | {"fence": "0" * 16}
        refused = await client.post(f"/runs/{run_id}/reconcile", json=stale)
        assert refused.status_code == 409 and error_type(refused) == "stale_reconciliation"
        other = token(live, name("ops2"), "runs:read-all", "runs:reconcile")
        async with http(live, other) as second:
            text = "Refund applied."
            first_try = client.post(
                f"/runs/{run_id}/reconcile", json=answer_of(run, "applied", result=text)
            )
            second_try = second.post(f"/runs/{run_id}/reconcile", json=answer_of(run, "give_up"))
            replies = await asyncio.gather(first_try, second_try)
        codes = sorted(r.status_code for r in replies)
        assert codes == [200, 409], [r.text for r in replies]
        loser = next(r for r in replies if r.status_code == 409)
        assert error_type(loser) in {"already_reconciled", "not_awaiting_reconciliation"}
        winner = next(r for r in replies if r.status_code == 200).json()
        done = await wait_status(client, run_id, "COMPLETED", "FAILED", seconds=30)
        events = await live.runtime.events(run_id)
    audits = [e for e in events if e.kind is EventKind.RECONCILED]
    assert len(audits) == 1 and audits[0].payload["answer"] == winner["answer"]
    assert done["status"] == ("COMPLETED" if winner["answer"] == "applied" else "FAILED")


@pytest.mark.timeout(180)
async def test_no_answer_within_the_timeout_fails_the_run(make_live: MakeLive) -> None:
    async with awaiting(make_live, "asker-brief") as (live, client, run_id, run):
        failed = await wait_status(client, run_id, "FAILED", seconds=30)
        late = await client.post(f"/runs/{run_id}/reconcile", json=answer_of(run, "give_up"))
        events = await live.runtime.events(run_id)
    assert failed["termination_reason"] == "interrupted_write"
    assert events[-1].kind is EventKind.RUN_FAILED
    assert events[-1].payload["error_type"] == ErrorType.RECONCILE_TIMEOUT.value
    assert late.status_code == 409 and error_type(late) == "not_awaiting_reconciliation"


@pytest.mark.timeout(180)
async def test_the_cli_and_the_python_api_answer_too(
    make_live: MakeLive, capsys: pytest.CaptureFixture[str]
) -> None:
    """The CLI through the operator API (as the token's principal), then the Python API
    (it holds the seal key, so it attests `answered_by` itself)."""
    async with awaiting(make_live) as (live, client, run_id, run):
        secret = token(live, name("cli"), "runs:read", "runs:read-all", "runs:reconcile")
        assert run_id in [v.run_id for v in await live.runtime.attention()]
        capsys.readouterr()
        code = await asyncio.to_thread(cli_main, ["--api", live.url, "--token", secret, "inbox"])
        shown, err = capsys.readouterr()
        assert code == 0, err
        assert "Needs attention" in shown and run_id in shown and "AWAITING_RECONCILIATION" in shown
        argv = ["--api", live.url, "--token", secret, "reconcile", run_id, "not-applied",
                "--then", "retry", "--fence", "0" * 16]  # fmt: skip
        code = await asyncio.to_thread(cli_main, argv)
        _, err = capsys.readouterr()
        assert code != 0 and "stale" in err.lower(), err  # another fence: refused
        assert (await live.runtime.status(run_id)).status is RunStatus.AWAITING_RECONCILIATION
        code = await asyncio.to_thread(cli_main, argv[:-2])
        shown, err = capsys.readouterr()
        assert code == 0, err
        assert "answered not-applied" in shown and "cli-" in shown
        done = await wait_status(client, run_id, "COMPLETED", seconds=30)
    assert DemoWorld(live.parts.ctx).ledger_count(run_id=run_id) == 1
    assert done["pending_write"] is None

    async with awaiting(make_live) as (live, client, run_id, run):
        write = (await live.runtime.status(run_id)).pending_effect
        assert write is not None and write.fence is not None
        assert write.fence == run["pending_write"]["fence"]
        view = await live.runtime.reconcile(
            run_id, call_id=write.call_id, fence=write.fence, answer="applied",
            result="Refunded (seen on the ledger).", answered_by="ops-python",
        )  # fmt: skip
        assert view.status in (RunStatus.RUNNING, RunStatus.COMPLETED)
        with pytest.raises(ReconcileError):
            await live.runtime.reconcile(
                run_id, call_id=write.call_id, fence=write.fence, answer="give_up",
                answered_by="ops-late",
            )  # fmt: skip
        await wait_status(client, run_id, "COMPLETED", seconds=30)
        events = await live.runtime.events(run_id)
    audit = next(e for e in events if e.kind is EventKind.RECONCILED)
    assert audit.payload["answered_by"] == "ops-python"
