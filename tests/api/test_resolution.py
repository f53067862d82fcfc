"""A run that FAILED with its write's outcome unknown is resolved by an operator (issue 40
item 3): with the scope `runs:resolve`, sight of the run, the call and fence it names and an
audited note, the principal records what the target system showed; the fence is emptied
and a WRITE_RESOLVED event names them, the run stays FAILED, and it leaves "Needs
attention" in the API and the CLI. `agentrt reconcile` on such a run says what to do
(naming the write and its idempotency key) and, given the note, records it. On cf842b3 the
run stayed in the attention list for ever and the CLI said only "run ... is FAILED"."""

import asyncio

import pytest

from agentrt.contracts.enums import EventKind, PendingState, RunStatus
from agentrt.contracts.errors import NothingToResolveError
from agentrt.starter.cli import main as cli_main
from tests.api._reconcile import MakeLive, awaiting
from tests.api.ops_helpers import error_type, http, name, token, wait_status

NOTE = "Ledger checked for the key: no refund row (ticket OPS-12)."


def _body(run: dict[str, object], said: str, **more: object) -> dict[str, object]:
    write = run["pending_write"]
    assert isinstance(write, dict)
    return {"call_id": write["call_id"], "fence": write["fence"], "outcome": said,
            "note": NOTE, **more}  # fmt: skip


@pytest.mark.timeout(180)
async def test_an_operator_resolves_a_failed_unknown_write_and_it_leaves_attention(
    make_live: MakeLive,
) -> None:
    async with awaiting(make_live, "asker-brief") as (live, client, run_id, _):
        run = await wait_status(client, run_id, "FAILED", seconds=30)  # nobody answered
        assert run["attention"] == "outcome_unknown"
        assert run["pending_write"]["state"] == PendingState.OUTCOME_UNKNOWN.value
        url = f"/runs/{run_id}/resolution"
        # The scope, sight of the run and a note are each required; nothing changes.
        async with http(live, token(live, name("reader"), "runs:read-all")) as c:
            reply = await c.post(url, json=_body(run, "not_applied"))
            assert reply.status_code == 403 and "runs:resolve" in reply.text
        async with http(live, token(live, name("blind"), "runs:resolve")) as c:
            assert (await c.post(url, json=_body(run, "not_applied"))).status_code == 404
        ops = name("ops")
        async with http(live, token(live, ops, "runs:read-all", "runs:resolve")) as c:
            for said, bad in (("not_applied", {"note": ""}), ("give_up", {}),
                              ("applied", {"note": "x" * 2001})):  # fmt: skip
                reply = await c.post(url, json=_body(run, said, **bad))
                assert reply.status_code in (400, 422), reply.text
            stale = await c.post(url, json=_body(run, "not_applied", fence="0" * 16))
            assert stale.status_code == 409 and error_type(stale) == "stale_resolution"
            assert (await c.get("/attention")).json()[0]["run_id"] == run_id

            done = await c.post(url, json=_body(run, "not_applied"))
            assert done.status_code == 200, done.text
            assert done.json()["resolved_by"] == ops
            after = done.json()["run"]
            assert (
                after["status"] == "FAILED" and after["termination_reason"] == "interrupted_write"
            )
            assert after["pending_write"] is None and after["attention"] is None
            assert run_id not in [r["run_id"] for r in (await c.get("/attention")).json()]
            listed = await c.get("/runs", params={"attention": "true", "limit": 200})
            assert run_id not in [r["run_id"] for r in listed.json()["runs"]]
            again = await c.post(url, json=_body(run, "applied"))
            assert again.status_code == 409 and error_type(again) == "nothing_to_resolve"
        events = await live.runtime.events(run_id)
    [resolved] = [e for e in events if e.kind is EventKind.WRITE_RESOLVED]
    assert events[-1] == resolved and resolved.sequence == events[-2].sequence + 1
    assert resolved.payload == {
        "call_id": run["pending_write"]["call_id"], "tool": "issue_refund",
        "fence": run["pending_write"]["fence"], "state": "outcome_unknown",
        "outcome": "not_applied", "resolved_by": ops, "authenticated": True, "note": NOTE,
    }  # fmt: skip


@pytest.mark.timeout(180)
async def test_the_cli_says_what_to_do_on_a_failed_run_then_records_it(
    make_live: MakeLive, capsys: pytest.CaptureFixture[str]
) -> None:
    async with awaiting(make_live, "asker-brief") as (live, client, run_id, _):
        run = await wait_status(client, run_id, "FAILED", seconds=30)
        key = run["pending_write"]["idempotency_key"]
        secret = token(live, name("cli"), "runs:read-all", "runs:resolve")
        api = ["--api", live.url, "--token", secret, "reconcile", run_id]
        capsys.readouterr()
        for argv in ([*api, "give-up"], [*api, "applied"]):
            code = await asyncio.to_thread(cli_main, argv)
            _, err = capsys.readouterr()
            assert code != 0 and "is FAILED" in err and key in err, err
            assert "applied|not-applied --reason" in err
        code = await asyncio.to_thread(cli_main, [*api, "applied", "--reason", NOTE])
        shown, err = capsys.readouterr()
        assert code == 0, err
        assert "recorded applied" in shown and "no longer needs attention" in shown
        assert "cli-" in shown  # the token's principal
        # Nothing is left to resolve: said so, with where to look.
        code = await asyncio.to_thread(cli_main, [*api, "applied", "--reason", NOTE])
        _, err = capsys.readouterr()
        assert code != 0 and "nothing to reconcile" in err
        view = await live.runtime.status(run_id)
        assert view.status is RunStatus.FAILED and view.pending_effect is None
        # The Python API resolves with its seal key, as itself; here: nothing left.
        with pytest.raises(NothingToResolveError):
            await live.runtime.resolve(
                run_id, call_id=run["pending_write"]["call_id"],
                fence=run["pending_write"]["fence"], outcome="applied",
                resolved_by="ops-python", note=NOTE,
            )  # fmt: skip
        assert run_id not in [v.run_id for v in await live.runtime.attention()]
