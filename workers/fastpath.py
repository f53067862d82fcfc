"""The fast paths: performance code that changes how a worker does its work, never what it
does, behind one switch (`worker.fast_paths`, AGENTRT_FAST_PATHS; on by default).

Each piece is kept for a gain the bench measured, and touches no private attribute of the
standard library or SQLAlchemy (bench/HISTORY.md set 19: the `loop` section on SQLite,
alternating, medians of three; worker CPU per run against the storeless loop):

- the store pool hands each call's result straight back to the event loop
  (activities/_loop_pool.py): 1.27x with both pieces, 1.35x with a ThreadPoolExecutor;
- the workflow runner answers the SDK's per-payload context questions outside the sandbox
  when the converter has no use for the answer (workers/runner.py): 1.35x without it;
- both off: 1.44x (1.41-1.47) against 1.30x (1.21-1.46) on, runs/s 0.86x against 1.01x.

Off, a worker runs the stock pieces: a ThreadPoolExecutor and the SDK's sandbox runner.
Both ways give the same rows, histories and replays (tests/workers/test_fastpath.py).

Measured and removed: the driver's cursor (a `store/db/driver.py` that ran the hottest
statements past SQLAlchemy's execution path on its compiler internals): no headline
measure moved beyond the noise (bench/HISTORY.md set 20).

Not behind this switch: the patch probe (workflows/patches.py). It decides which commands a
run emits, so it is part of the workflow's determinism, not a worker's choice: runs begun
on a build with it record no patch markers (tests/histories/cf842b3-*, next-input_refused,
next-long_run_segment3), and only the probe replays them on their patched paths."""

from concurrent.futures import Executor, ThreadPoolExecutor

from temporalio.converter import DataConverter
from temporalio.worker import WorkflowRunner
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

from agentrt.activities._loop_pool import LoopPool
from agentrt.workers.runner import ContextFreeRunner, ignores_context


def store_pool(fast: bool, threads: int, prefix: str) -> Executor:
    """The pool the async activities' store calls run on (workers/pool.py)."""
    return LoopPool(threads, prefix) if fast else ThreadPoolExecutor(threads, prefix)


def workflow_runner(
    fast: bool, sandbox: SandboxedWorkflowRunner, converter: DataConverter | None
) -> WorkflowRunner:
    """The sandbox, with its context answers given outside it where that changes nothing."""
    if fast and converter is not None and ignores_context(converter):
        return ContextFreeRunner(sandbox)
    return sandbox
