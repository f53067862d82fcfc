"""Starting runs and timing them from the client, the same way for both kinds of run:
start the workflow, wait for its result, stop the clock."""

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable

from temporalio.client import WorkflowFailureError

from agentrt.contracts.enums import RunStatus, TerminationReason
from agentrt.contracts.run import RunResult
from bench.bare_workflow import ACT_NOOP, WORKFLOW_BARE, WORKFLOW_TIMERS, BareInput, TimerInput
from bench.harness import Bench
from bench.loop_workflow import WORKFLOW_LOOP, LoopInput


class BenchError(RuntimeError):
    """A benchmark run did not do what the benchmark relies on."""


async def all_of(runs: Iterable[Awaitable[object]]) -> None:
    """Await every run; the first failure cancels the others, then propagates. (A bare
    gather leaves them running: a burst whose one run failed went on starting runs against
    a worker that was shutting down, and the process took long to exit, if it did.)"""
    tasks = [asyncio.ensure_future(r) for r in runs]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def _ms_since(start: float) -> float:
    return (time.perf_counter() - start) * 1000


async def agent_run(
    bench: Bench, profile: str, prompt: str, *, max_iterations: int | None = None
) -> tuple[float, RunResult]:
    """One agent run through the public facade; (client-side ms, the workflow's result)."""
    runtime = bench.runtime
    start = time.perf_counter()
    run_id = await runtime.start(profile, prompt, max_iterations=max_iterations, initiator="bench")
    try:
        result = await bench.client.get_workflow_handle(run_id, result_type=RunResult).result()
    except WorkflowFailureError as err:
        # The run's own settled reason (its status and termination reason, never content).
        view = await runtime.status(run_id)
        events = await runtime.events(run_id)
        kind = events[-1].payload.get("error_type") if events else None
        raise BenchError(
            f"agent run {run_id} failed: {view.status.value} {view.termination_reason} ({kind})"
        ) from err
    elapsed = _ms_since(start)
    if result.status is not RunStatus.COMPLETED:
        raise BenchError(f"agent run {run_id} ended {result.status.value}: {result.outcome}")
    return elapsed, result


async def bare_run(
    bench: Bench, activities: int, activity: str = ACT_NOOP, *, workflow_id: str | None = None
) -> float:
    start = time.perf_counter()
    done = await bench.client.execute_workflow(
        WORKFLOW_BARE,
        BareInput(activities=activities, activity=activity),
        id=workflow_id or f"bench-bare-{uuid.uuid4()}",
        task_queue=bench.task_queue,
        result_type=int,
    )
    elapsed = _ms_since(start)
    if done != activities:
        raise BenchError(f"bare run ran {done} activities, not {activities}")
    return elapsed


async def throughput(
    one: Callable[[], Awaitable[object]], *, total: int, concurrency: int
) -> float:
    """Completed runs per second with `concurrency` runs in flight."""
    gate = asyncio.Semaphore(concurrency)

    async def gated() -> None:
        async with gate:
            await one()

    start = time.perf_counter()
    await all_of(gated() for _ in range(total))
    return total / (time.perf_counter() - start)


async def timer_run(bench: Bench, timers: int, each_ms: int) -> float:
    start = time.perf_counter()
    await bench.client.execute_workflow(
        WORKFLOW_TIMERS,
        TimerInput(timers=timers, ms=each_ms),
        id=f"bench-timers-{uuid.uuid4()}",
        task_queue=bench.task_queue,
        result_type=int,
    )
    return _ms_since(start)


async def loop_run(bench: Bench, workflow_id: str, loop: LoopInput) -> float:
    """One hand-written loop run to its end: its wall ms; a BenchError unless it made
    every one of its tool calls."""
    start = time.perf_counter()
    made = await bench.client.execute_workflow(
        WORKFLOW_LOOP, loop, id=workflow_id, task_queue=bench.task_queue, result_type=int
    )
    if made != loop.tools:
        raise BenchError(f"the loop made {made} tool calls, not {loop.tools}")
    return (time.perf_counter() - start) * 1000


# --- the mixed agent run of k tool calls and its hand-written loops (bench/versus.py,
# bench/sqlcount.py, bench/profile_burst.py, bench/thread_split.py) ---------------------------

MIXED_PROFILE = "bench-mixed"


def mixed_prompt(k: int) -> str:
    return f"bench mixed={k}"


async def answered_run(bench: Bench, profile: str, prompt: str, k: int) -> tuple[float, str]:
    """One agent run that makes k tool calls, then answers: (client-side ms, its run id)."""
    elapsed, result = await agent_run(bench, profile, prompt)
    if result.iterations != k + 1 or result.termination_reason is not TerminationReason.ANSWERED:
        raise BenchError(f"agent run for k={k} took {result.iterations} rounds, not {k + 1}")
    return elapsed, result.run_id


async def agent_once(bench: Bench, k: int) -> tuple[float, str]:
    """One mixed agent run: k tool calls, the last a non-idempotent write, then its answer."""
    return await answered_run(bench, MIXED_PROFILE, mixed_prompt(k), k)


def loop_workflow_id(run_id: str, *, stores: bool) -> str:
    return f"bench-{'loop' if stores else 'storeless'}-{run_id}"


async def loop_once(bench: Bench, k: int, *, stores: bool = True) -> tuple[float, str]:
    """One run of the persistent loop, or of the storeless loop (stores=False)."""
    run_id = str(uuid.uuid4())  # 36 characters, like the agent's run ids (ledger column)
    loop = LoopInput(run_id=run_id, tools=k, stores=stores)
    return await loop_run(bench, loop_workflow_id(run_id, stores=stores), loop), run_id
