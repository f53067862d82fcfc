"""The fuzz harness's common parts: a per-surface tally, a log trap, a DB snapshot, and the
hypothesis driver that runs N cases of a strategy through a check without stopping at the
first failure (every case counts; each failure is kept, described, up to a limit).

A check returns "accepted" or "rejected" for a case, or raises `Finding` (or anything
else, which is a finding too). Pass means: no 5xx, no traceback in the logs or on stderr
for bad input, and no state change for a rejected input.
"""

import hashlib
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, func, inspect, select, text

from agentrt.store.db.tables import RunRow

Verdict = Literal["accepted", "rejected"]
MAX_KEPT = 20

# The tables a bad input must leave untouched (the push delivery log is the deliverer's
# own bookkeeping and moves on its own schedule).
STATE_TABLES = (
    "agent_run",
    "agent_event",
    "agent_message",
    "tool_result",
    "demo_record",
    "demo_ledger",
    "a2a_task",
    "a2a_event",
    "a2a_push_config",
)


class Finding(Exception):
    """A case broke a pass rule."""


@dataclass
class Tally:
    surface: str
    cases: int = 0
    accepted: int = 0
    rejected: int = 0
    failures: list[str] = field(default_factory=list)
    failed: int = 0

    def fail(self, text: str) -> None:
        self.failed += 1
        if len(self.failures) < MAX_KEPT:
            self.failures.append(text)


def _has_traceback(record: logging.LogRecord) -> bool:
    return record.exc_info is not None or "Traceback (most recent call last)" in (
        record.getMessage() + (record.exc_text or "") + (record.stack_info or "")
    )


class LogTrap(logging.Handler):
    """Every WARNING+ record with a traceback, from any logger, while installed on root."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self._lock2 = threading.Lock()
        self.tracebacks: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if _has_traceback(record):
            with self._lock2:
                self.tracebacks.append(f"{record.name}: {record.getMessage()[:300]}")

    def count(self) -> int:
        with self._lock2:
            return len(self.tracebacks)

    def since(self, mark: int) -> list[str]:
        with self._lock2:
            return self.tracebacks[mark:]

    def __enter__(self) -> "LogTrap":
        logging.getLogger().addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        logging.getLogger().removeHandler(self)


def snapshot(engine: Engine, tables: tuple[str, ...] = STATE_TABLES) -> dict[str, str]:
    """A digest of every row of `tables` (those that exist), ordered by primary key."""
    present = set(inspect(engine).get_table_names())
    out: dict[str, str] = {}
    with engine.connect() as conn:
        for name in tables:
            if name not in present:
                continue
            rows = conn.execute(select(text("*")).select_from(text(name))).all()
            digest = hashlib.sha256(repr(sorted(map(repr, rows))).encode()).hexdigest()
            out[name] = f"{len(rows)}:{digest[:16]}"
    return out


def changed(before: dict[str, str], after: dict[str, str]) -> list[str]:
    return [f"{t} {before.get(t)} -> {after.get(t)}" for t in after if before.get(t) != after[t]]


def drive(
    tally: Tally,
    strategy: st.SearchStrategy[Any],
    check: Callable[[Any], Verdict],
    *,
    cases: int,
    seed_value: int | None,
    trap: LogTrap | None = None,
) -> None:
    """Run `cases` generated cases through `check` (in the calling thread). With
    `seed_value` None the run is derandomized (the suite's deterministic slice)."""

    def one(case: Any) -> None:
        tally.cases += 1
        mark = trap.count() if trap is not None else 0
        try:
            verdict = check(case)
        except Finding as exc:
            tally.fail(f"{exc} | case {_show(case)}")
            return
        except Exception as exc:
            tally.fail(f"unexpected {type(exc).__name__}: {str(exc)[:300]} | case {_show(case)}")
            return
        if verdict == "accepted":
            tally.accepted += 1
        else:
            tally.rejected += 1
        if trap is not None:
            for line in trap.since(mark):
                tally.fail(f"traceback logged: {line} | case {_show(case)}")

    runner = settings(
        max_examples=cases,
        database=None,
        derandomize=seed_value is None,
        deadline=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
        print_blob=False,
    )(given(strategy)(one))
    if seed_value is not None:
        runner = seed(seed_value)(runner)
    runner()


def _show(case: Any) -> str:
    return repr(case)[:400]


# A run in these is still moving on its own: its next rows are coming.
MOVING = ("STARTING", "RUNNING")
STEADY_POLLS = 3  # the rows unchanged this many polls in a row (0.45 s)


def quiesce(engine: Engine, seconds: float = 20.0) -> dict[str, str]:
    """The snapshot once the rows stop moving (every run started by an accepted case has
    reached a wait or its end, and its task's projection has caught up), or after
    `seconds`. Steady means: no run STARTING or RUNNING, and the rows unchanged for
    STEADY_POLLS polls in a row (a loaded machine pauses a run longer than one poll)."""
    import time

    last, deadline, steady = snapshot(engine), time.monotonic() + seconds, 0
    while time.monotonic() < deadline:
        time.sleep(0.15)
        now = snapshot(engine)
        steady = steady + 1 if now == last and not _moving(engine) else 0
        if steady >= STEADY_POLLS:
            break
        last = now
    return last


def _moving(engine: Engine) -> bool:
    """Whether a run is STARTING or RUNNING and was written lately (a run some earlier job
    left RUNNING with no worker, in a database the suite shares, is not waited for)."""
    lately = datetime.now(UTC) - timedelta(seconds=10)
    q = select(func.count()).select_from(RunRow)
    q = q.where(RunRow.status.in_(MOVING), RunRow.updated_at > lately)
    with engine.connect() as conn:
        return bool(conn.execute(q).scalar_one())
