"""Surfaces that go through Temporal: approval decisions sent as the `approve` signal and as
the `decide` update to runs waiting for approval, and the `agentrt` CLI's arguments.

Decisions: every generated payload is refused (a payload that would be a valid decision
for the run's pending turn gets a wrong digest), so the run must stay waiting on the same
turn with the same rows. A signal has no answer: an update sent after it is the barrier
(the workflow handles them in order), then the state is compared.

CLI: `agentrt.starter.cli.main(argv)` in-process; the exit code is 0, 1 or 2, nothing
prints a traceback, and an exit of 2 (refused) changes no row.
"""

import asyncio
import contextlib
import io
from collections.abc import Coroutine
from datetime import timedelta
from typing import Any, TypeVar

from hypothesis import strategies as st
from pydantic import ValidationError
from sqlalchemy import Engine
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowUpdateFailedError

from agentrt.contracts.approval import ApprovalDecision
from agentrt.contracts.ids import QUERY_PENDING_APPROVAL, SIGNAL_APPROVE, UPDATE_DECIDE
from agentrt.starter import cli
from bench.fuzz_core import Finding, LogTrap, Tally, Verdict, changed, drive, quiesce, snapshot
from bench.fuzz_local import JSON

T = TypeVar("T")
BARRIER = {"approved": True, "decided_by": "fuzz-barrier", "turn_digest": "barrier"}


def _on(loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run_coroutine_threadsafe(coro, loop).result(timeout=60)


def decision_payloads(digests: list[str]) -> st.SearchStrategy[Any]:
    digest = st.sampled_from(digests) | st.text(max_size=140) | JSON
    near = st.fixed_dictionaries(
        {},
        optional={
            "approved": st.booleans() | JSON,
            "decided_by": st.sampled_from(["ops", "", " "]) | st.text(max_size=210) | JSON,
            "turn_digest": digest,
            "reason": st.none() | st.text(max_size=30) | st.just("r" * 2001) | JSON,
            "extra": JSON,
        },
    )
    return near | JSON


def _refusable(payload: Any, real: set[str]) -> Any:
    """The payload, with a wrong digest if it would otherwise be a valid decision."""
    try:
        decision = ApprovalDecision.model_validate(payload)
    except ValidationError:
        return payload
    if decision.turn_digest in real:
        return {**payload, "turn_digest": "f" * 64}
    return payload


async def _state(client: Client, run_id: str) -> tuple[Any, Any]:
    handle = client.get_workflow_handle(run_id)
    pending = await handle.query(QUERY_PENDING_APPROVAL)
    status = (await handle.describe()).status
    digest = pending.get("turn_digest") if isinstance(pending, dict) else pending
    return digest, status


def decisions_surface(
    client: Client,
    loop: asyncio.AbstractEventLoop,
    engine: Engine,
    runs: dict[str, str],
    cases: int,
    seed_value: int | None,
    trap: LogTrap,
) -> list[Tally]:
    """`runs`: run id -> the digest of its pending turn."""
    real = set(runs.values())
    ids = sorted(runs)

    async def send(kind: str, run_id: str, payload: Any) -> Verdict:
        handle = client.get_workflow_handle(run_id)
        if kind == "signal":
            await handle.signal(SIGNAL_APPROVE, payload)
            payload = BARRIER  # the barrier: answered after the signal is handled
        try:
            await handle.execute_update(UPDATE_DECIDE, payload, rpc_timeout=timedelta(seconds=20))
        except WorkflowUpdateFailedError:
            return "rejected"
        raise Finding(f"the {kind} decision was accepted")

    def check(case: tuple[str, int, Any]) -> Verdict:
        kind, index, raw = case
        run_id = ids[index % len(ids)]
        payload = _refusable(raw, real)
        before, rows = _on(loop, _state(client, run_id)), snapshot(engine)
        verdict = _on(loop, send(kind, run_id, payload))
        after, rows_after = _on(loop, _state(client, run_id)), snapshot(engine)
        if after != before or after[1] != WorkflowExecutionStatus.RUNNING:
            raise Finding(f"refused {kind} moved the run: {before} -> {after}")
        if changed(rows, rows_after):
            raise Finding(f"refused {kind} changed rows: {changed(rows, rows_after)}")
        return verdict

    out = []
    for kind in ("signal", "update"):
        tally = Tally(f"approval decision ({kind})")
        strategy = st.tuples(st.just(kind), st.integers(0, 50), decision_payloads(sorted(real)))
        drive(tally, strategy, check, cases=cases, seed_value=seed_value, trap=trap)
        out.append(tally)
    return out


# --- CLI -------------------------------------------------------------------------------------


def cli_argvs(
    waiting: list[str], ended: list[str], profile: str = "helper"
) -> st.SearchStrategy[list[str]]:
    garbage = st.text(max_size=20) | st.sampled_from(["-", "--", "--json", "' OR 1=1", "\x00"])
    any_id = st.sampled_from(waiting + ended) | st.uuids().map(str) | garbage
    safe_id = st.sampled_from(ended) | st.uuids().map(str) | garbage  # never a waiting run
    name = st.sampled_from(["ops", "", " ", "x" * 201]) | st.text(max_size=12)
    digest = st.text(max_size=70)
    flags = st.lists(st.sampled_from(["--json", "--after", "-1", "--nope", "-h"]), max_size=2)

    def cmd(*parts: st.SearchStrategy[Any]) -> st.SearchStrategy[list[str]]:
        return st.tuples(*parts).map(lambda t: [x for p in t for x in p])

    one = st.builds(lambda x: [x], any_id)
    return st.one_of(
        cmd(st.just(["status"]), one, flags),
        cmd(st.just(["events"]), one, flags),
        cmd(st.just(["inbox"]), flags),
        cmd(
            st.sampled_from([["approve"], ["deny"]]),
            st.builds(lambda x: [x], any_id),
            st.builds(lambda b: ["--by", b], name) | st.just([]),
            st.builds(lambda d: ["--digest", d], digest),
            st.builds(lambda r: ["--reason", r], st.text(max_size=10)) | st.just([]),
        ),
        cmd(
            st.just(["cancel"]),
            st.builds(lambda x: [x], safe_id),
            st.builds(lambda b: ["--by", b], name) | st.just([]),
        ),
        cmd(
            st.just(["start"]),
            st.builds(
                lambda p, t: [p, t],
                st.sampled_from(["nosuch", "", profile, "internal"]),
                st.sampled_from(["hello", ""]) | st.text(max_size=20),
            ),
            st.builds(lambda n: ["--max-iterations", n], st.sampled_from(["0", "-3", "x", "99"]))
            | st.just([]),
            st.builds(lambda i: ["--initiator", i], name) | st.just([]),
        ),
        st.lists(garbage, max_size=4),
    )


def cli_surface(
    engine: Engine, argvs: st.SearchStrategy[list[str]], cases: int, seed_value: int | None,
    trap: LogTrap,
) -> list[Tally]:  # fmt: skip
    """Run in a thread of its own: each command runs its own event loop, as the CLI does."""
    state = {"rows": snapshot(engine)}

    def check(argv: list[str]) -> Verdict:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code: object = cli.main(argv)
            except SystemExit as exc:  # argparse: usage errors (2) and --help (0)
                code = exc.code
        text = out.getvalue() + err.getvalue()
        if "Traceback (most recent call last)" in text:
            raise Finding(f"traceback printed: {text[-300:]}")
        if code not in (0, 1, 2):
            raise Finding(f"exit code {code!r}: {text[-200:]}")
        after = snapshot(engine)
        if code == 2 and changed(state["rows"], after):
            diff = changed(state["rows"], after)
            state["rows"] = after
            raise Finding(f"refused (exit 2: {err.getvalue()[-160:]!r}) but rows changed: {diff}")
        if code == 2:
            state["rows"] = after
            return "rejected"
        state["rows"] = quiesce(engine)
        return "accepted"

    tally = Tally("CLI arguments")
    drive(tally, argvs, check, cases=cases, seed_value=seed_value, trap=trap)
    return [tally]
