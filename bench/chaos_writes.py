"""`python -m bench.chaos_writes`: SIGKILLs aimed inside the write window (issue 27).

`--runs` runs of `bench writes` (4 unfenced writes, 4 fenced refunds each) on `--workers`
plain worker processes and one trap worker at a time. A trap blocks at a point of a fenced
write (after the claim, after the effect, inside the record: workers/faults.py) and drops
a marker; the bench SIGKILLs its process group there and starts the next trap, cycling
through the points, until `--kills` kills are done. With probes (the demo refund's ledger
lookup), every interrupted write should be reconciled: 0 runs `interrupted_write`. With
`--no-probes` the probe's target is down on every worker, as if there were none: those
runs fail `interrupted_write`, at most once. Either way: 0 double writes (a call with more
than one ledger row), and every COMPLETED run's ledger matches its recorded refund steps.
"""

import argparse
import asyncio
import os
import signal
import sys
import time
from collections import Counter
from pathlib import Path

from sqlalchemy import func, select

from agentrt.contracts.enums import EventKind, RunStatus
from agentrt.starter.facade import AgentRuntime
from agentrt.store.db.context import StoreContext
from agentrt.store.db.tables import DemoLedgerRow
from agentrt.store.ops.registry import ProfileRegistry
from bench.chaos import Fleet, chaos_stack, run_chaos

PROFILE, PROMPT = "bench-writes-chaos", "bench writes"
POINTS = ("write.after_claim", "write.after_effect", "record.before_clear")
PROBE_DOWN = "reconcile.before_probe"


def ledger_by_call(ctx: StoreContext, run_id: str) -> dict[str, int]:
    q = (
        select(DemoLedgerRow.call_id, func.count())
        .where(DemoLedgerRow.run_id == run_id)
        .group_by(DemoLedgerRow.call_id)
    )
    with ctx.sessions() as s:
        return {str(call): int(n) for call, n in s.execute(q).all()}


class Traps:
    """One trap worker at a time, each armed at the next point, killed once it is there."""

    def __init__(self, fleet: Fleet, work: Path, kills: int) -> None:
        self.fleet, self.work, self.left = fleet, work, kills
        self.by_point: Counter[str] = Counter()
        self.armed: tuple[int, str, Path] | None = None  # (fleet index, point, marker)

    def arm(self) -> None:
        if self.left <= 0:
            return
        point = POINTS[sum(self.by_point.values()) % len(POINTS)]
        marker = self.work / f"trap-{len(self.fleet.procs)}"
        env = {**self.fleet.env, "AGENTRT_FAULT_BLOCK_AT": point,
               "AGENTRT_FAULT_MARKER_DIR": str(marker)}  # fmt: skip
        self.fleet.spawn(env)
        self.armed = (len(self.fleet.procs) - 1, point, marker / point)

    def check(self) -> None:
        """Kill the trap if it reached its point, and arm the next one."""
        if self.armed is None:
            return
        index, point, marker = self.armed
        if not marker.exists():
            return
        victim = self.fleet.procs[index]
        os.killpg(victim.pid, signal.SIGKILL)
        victim.wait(timeout=10)
        self.by_point[point] += 1
        self.left -= 1
        self.armed = None
        self.arm()


async def drive(ns: argparse.Namespace, runtime: AgentRuntime, ctx: StoreContext,
                traps: Traps) -> dict[str, RunStatus]:  # fmt: skip
    registry = ProfileRegistry(ctx)
    for _ in range(240):  # until the workers are up (a minute at most)
        if await asyncio.to_thread(registry.get, PROFILE) is not None:
            break
        await asyncio.sleep(0.25)
    run_ids: list[str] = []
    settled: dict[str, RunStatus] = {}
    end = time.monotonic() + ns.deadline
    next_start = time.monotonic()
    while (len(settled) < ns.runs) and time.monotonic() < end:
        # Staggered starts, so the traps (each a new process) meet writes all along.
        if len(run_ids) < ns.runs and time.monotonic() >= next_start:
            run_ids.append(await runtime.start(PROFILE, PROMPT, initiator="bench"))
            next_start += ns.every
        await asyncio.to_thread(traps.check)
        for run_id in run_ids:
            if run_id not in settled:
                view = await runtime.status(run_id)
                if view.status.terminal:
                    settled[run_id] = view.status
        await asyncio.sleep(0.2)
    return settled


async def verdicts(runtime: AgentRuntime, ctx: StoreContext, settled: dict[str, RunStatus]
                   ) -> tuple[Counter[str], int, int]:  # fmt: skip
    """(outcomes by status and reason, double-written calls, COMPLETED runs whose ledger
    does not match their recorded refund steps)."""
    outcomes: Counter[str] = Counter()
    doubles = mismatched = 0
    for run_id, status in settled.items():
        view = await runtime.status(run_id)
        reason = view.termination_reason.value if view.termination_reason else "-"
        outcomes[f"{status.value} {reason}"] += 1
        ledger = await asyncio.to_thread(ledger_by_call, ctx, run_id)
        doubles += sum(1 for n in ledger.values() if n > 1)
        if status is RunStatus.COMPLETED:
            steps = {
                e.payload["call_id"]
                for e in await runtime.events(run_id)
                if e.kind is EventKind.TOOL and e.payload.get("tool") == "issue_refund"
                and not e.payload.get("is_error")
            }  # fmt: skip
            mismatched += steps != set(ledger)
    return outcomes, doubles, mismatched


async def main_async(ns: argparse.Namespace) -> int:
    async with chaos_stack("chaos-writes", ns.postgres) as stack:
        if ns.no_probes:
            stack.env["AGENTRT_FAULT_FAIL_AT"] = PROBE_DOWN
        fleet = Fleet(stack.env, stack.work)
        for _ in range(ns.workers):
            fleet.spawn()
        traps = Traps(fleet, stack.work, ns.kills)
        traps.arm()
        started = time.monotonic()
        try:
            settled = await drive(ns, stack.runtime, stack.ctx, traps)
            outcomes, doubles, mismatched = await verdicts(stack.runtime, stack.ctx, settled)
        finally:
            fleet.stop()
        took = time.monotonic() - started
    unsettled = ns.runs - len(settled)
    interrupted = sum(n for k, n in outcomes.items() if k.endswith("interrupted_write"))
    print(f"chaos inside the write window: {ns.runs} runs x 4 fenced refunds, {ns.workers} "
          f"workers + 1 trap, {'no probes' if ns.no_probes else 'probes'}, "
          f"{'PostgreSQL' if ns.postgres else 'SQLite'}, {took:.0f} s")  # fmt: skip
    print(f"kills: {dict(traps.by_point)}")
    print(f"outcomes: {dict(outcomes)}; unsettled: {unsettled}")
    print(f"runs interrupted_write: {interrupted}; double writes: {doubles}; "
          f"COMPLETED runs whose ledger differs from their steps: {mismatched}")  # fmt: skip
    ok = doubles == 0 and mismatched == 0 and unsettled == 0
    if not ns.no_probes:
        ok = ok and interrupted == 0
    print("OK" if ok else "NOT OK")
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.chaos_writes", description=__doc__)
    p.add_argument("--runs", type=int, default=40)
    p.add_argument("--workers", type=int, default=1, help="plain workers beside the trap")
    p.add_argument("--every", type=float, default=1.5, help="seconds between run starts")
    p.add_argument("--kills", type=int, default=9, help="targeted kills in all")
    p.add_argument("--deadline", type=float, default=600.0, help="give up waiting after")
    p.add_argument("--no-probes", action="store_true", help="the probe's target is down")
    return run_chaos(p, main_async, argv)


if __name__ == "__main__":
    sys.exit(main())
