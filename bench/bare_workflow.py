"""Baselines: a bare workflow running n trivial activities back to back, and a timer probe.

Loaded inside the workflow sandbox, so it imports nothing but temporalio: the activities are
called by name.
"""

from dataclasses import dataclass
from datetime import timedelta

from temporalio import workflow

WORKFLOW_BARE = "BenchBare"
ACT_NOOP = "bench.noop"
ACT_DB_WRITE = "bench.db_write"


@dataclass(frozen=True)
class BareInput:
    activities: int
    # ACT_NOOP (does nothing) or ACT_DB_WRITE (one trivial committed write).
    activity: str = ACT_NOOP


@workflow.defn(name=WORKFLOW_BARE)
class BareWorkflow:
    @workflow.run
    async def run(self, inp: BareInput) -> int:
        for i in range(inp.activities):
            await workflow.execute_activity(
                inp.activity, i, start_to_close_timeout=timedelta(seconds=10)
            )
        return inp.activities


WORKFLOW_TIMERS = "BenchTimers"


@dataclass(frozen=True)
class TimerInput:
    timers: int
    ms: int


@workflow.defn(name=WORKFLOW_TIMERS)
class TimerWorkflow:
    """Timer probe: how late the server fires short timers (retry backoffs are timers too)."""

    @workflow.run
    async def run(self, inp: TimerInput) -> int:
        for _ in range(inp.timers):
            await workflow.sleep(timedelta(milliseconds=inp.ms))
        return inp.timers
