"""CPU of one run's completion with its answer's turn, single-threaded:
`python -m bench.completion_call [--postgres]`.

Each round begins 300 runs (untimed), then completes each on an answer turn made by the
model activity (Completion.complete with the TurnRecord, as activities/model.py calls it),
timed by the thread's CPU clock; the median of five rounds. On PostgreSQL that is the one
statement (the answer level read with the turn's inputs); on SQLite the full transaction:
the turn's rows, the row read, the guarded UPDATE and the event.
"""

import statistics
import sys
import tempfile
import time
from pathlib import Path

from agentrt.activities.settle.completion import Completion
from agentrt.contracts.enums import TerminationReason
from agentrt.contracts.messages import Message, Usage
from agentrt.contracts.plan import RunPlan
from agentrt.contracts.profiles import Timeouts
from agentrt.contracts.run import CompleteRequest, TurnRecord
from agentrt.contracts.snapshot import SnapshotRecord
from agentrt.core.settings import Settings
from agentrt.store.db.open import open_store
from agentrt.store.db.sealing import Sealer
from agentrt.store.runs.record import RunStore
from bench.database import begin_runs, bench_database

ROUNDS, RUNS = 5, 300
# A plan at `full`, as a profile's: the completion keeps the answer at the run's level.
SNAPSHOT = SnapshotRecord(
    plan=RunPlan(profile="p", model="", max_iterations=8, tools=[], privacy="full",
                 timeouts=Timeouts())
)  # fmt: skip


def _round(runs: RunStore, completion: Completion) -> float:
    ids = begin_runs(runs, RUNS, SNAPSHOT)
    start = time.thread_time()
    for run_id in ids:
        answer = Message(role="assistant", content="the answer " * 10)
        turn = TurnRecord(2, 1, answer, {"content": "x"}, 1.0, "full", answer_level="full")
        request = CompleteRequest(
            run_id=run_id, privacy="full", sequence=3, answer_sequence=2, iterations=1,
            truncated=False, termination_reason=TerminationReason.ANSWERED, usage=Usage(),
        )  # fmt: skip
        if not completion.complete(request, turn).applied:
            raise RuntimeError(f"run {run_id} was not completed")
    return (time.thread_time() - start) / RUNS * 1e6


def main() -> None:
    dsn = Settings().database.postgres_dsn if "--postgres" in sys.argv else None
    with tempfile.TemporaryDirectory() as tmp, bench_database(Path(tmp), dsn) as url:
        engine, ctx = open_store(url, Sealer.from_b64(f"bench:{Sealer.new_key_b64()}"))
        try:
            runs, completion = RunStore(ctx), Completion(ctx)
            timed = [_round(runs, completion) for _ in range(ROUNDS)]
        finally:
            engine.dispose()
    print(f"completion with its answer's turn: {statistics.median(timed):.0f} µs CPU "
          f"(median of {ROUNDS} rounds of {RUNS})")  # fmt: skip


if __name__ == "__main__":
    main()
