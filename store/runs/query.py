"""Listing runs for operators: filtered, visibility-bound, keyset-paged by an opaque cursor
that stays stable while new runs arrive (newest first)."""

import base64
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import and_, or_, select

from agentrt.contracts.enums import RunStatus, TerminationReason
from agentrt.contracts.schedules import SCHEDULED_PREFIX
from agentrt.contracts.snapshot import RunSnapshot
from agentrt.contracts.views import RunView
from agentrt.store.db.context import StoreContext, as_utc
from agentrt.store.db.tables import RunRow
from agentrt.store.runs.record import RunStore
from agentrt.store.runs.view import run_view

# Why a run needs an operator: it failed with a write's outcome unknown (its fence holds
# the call: GET /runs/{id} shows it; POST /runs/{id}/resolution records what the target
# system showed, and empties it: store/runs/resolution.py), or it waits for an operator's answer
# on such a write (`on_unknown_outcome: ask`: POST /runs/{id}/reconcile answers it).
Attention = Literal["outcome_unknown", "awaiting_reconciliation"]

# store/ops/gauges.py counts the same runs (agentrt_runs_outcome_unknown, which the page alert
# AgentrtWriteOutcomeUnknown reads): a run this rule stops naming leaves the alert too.
OUTCOME_UNKNOWN = and_(
    RunRow.status == RunStatus.FAILED.value,
    RunRow.termination_reason == TerminationReason.INTERRUPTED_WRITE.value,
    RunRow.pending_call_id.is_not(None),
)
_AWAITING = RunRow.status == RunStatus.AWAITING_RECONCILIATION.value
_NEEDS_ATTENTION = or_(OUTCOME_UNKNOWN, _AWAITING)


def seen_by(principal: str) -> Any:
    """The runs a principal that sees only its own sees: those it started, and the fires of
    the schedules it made (contracts/schedules.py `sees`, the same rule for one run)."""
    return or_(
        RunRow.initiator == principal,
        and_(
            RunRow.initiator.startswith(SCHEDULED_PREFIX, autoescape=True),
            RunRow.initiator.endswith(f" by {principal}", autoescape=True),
        ),
    )


def attention(view: RunView) -> Attention | None:
    """Why this run needs an operator, if it does (the same rule as `RunQuery.attention`)."""
    if view.status is RunStatus.AWAITING_RECONCILIATION:
        return "awaiting_reconciliation"
    if (
        view.status is RunStatus.FAILED
        and view.termination_reason is TerminationReason.INTERRUPTED_WRITE
        and view.pending_effect is not None
    ):
        return "outcome_unknown"
    return None


class BadCursorError(ValueError):
    """A cursor this server did not hand out."""


@dataclass(frozen=True)
class RunPage:
    runs: list[RunView]
    next_cursor: str | None


def encode_cursor(created_at: datetime, run_id: str) -> str:
    raw = json.dumps({"t": created_at.isoformat(), "i": run_id}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        data = json.loads(raw)
        ts = as_utc(datetime.fromisoformat(data["t"]))
        run_id = data["i"]
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        raise BadCursorError("malformed cursor") from None
    if ts is None or not isinstance(run_id, str) or not run_id:
        raise BadCursorError("malformed cursor")
    return ts, run_id


class RunQuery:
    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx
        self._runs = RunStore(ctx)

    def page(
        self,
        *,
        visible_to: str | None,
        status: str | None = None,
        profile: str | None = None,
        initiator: str | None = None,
        needs_attention: bool = False,
        limit: int = 50,
        cursor: str | None = None,
    ) -> RunPage:
        """`visible_to=None` sees every run; otherwise only runs that principal started.
        `needs_attention` keeps the runs `attention` names (the rule GET /attention lists)."""
        filters: list[Any] = []
        if visible_to is not None:
            filters.append(seen_by(visible_to))
        if status:
            filters.append(RunRow.status == status)
        if profile:
            filters.append(RunRow.profile == profile)
        if initiator:
            filters.append(RunRow.initiator == initiator)
        if needs_attention:
            filters.append(_NEEDS_ATTENTION)
        if cursor:
            ts, last = decode_cursor(cursor)
            filters.append(
                or_(RunRow.created_at < ts, and_(RunRow.created_at == ts, RunRow.id < last))
            )
        q = (
            select(RunRow)
            .where(*filters)
            .order_by(RunRow.created_at.desc(), RunRow.id.desc())
            .limit(limit + 1)
        )
        with self._ctx.reads() as s:
            rows = s.scalars(q).all()
        views = [run_view(self._runs.ctx, r) for r in rows[:limit]]
        more = len(rows) > limit
        last_view = views[-1] if views else None
        next_cursor = (
            encode_cursor(last_view.created_at, last_view.run_id) if more and last_view else None
        )
        return RunPage(views, next_cursor)

    def inbox(self, *, visible_to: str | None, limit: int = 50) -> list[RunView]:
        """Waiting runs, oldest first (the same order as `RunStore.inbox`)."""
        q = select(RunRow).where(RunRow.status == RunStatus.WAITING_FOR_APPROVAL.value)
        if visible_to is not None:
            q = q.where(seen_by(visible_to))
        with self._ctx.reads() as s:
            rows = s.scalars(q.order_by(RunRow.waiting_since, RunRow.created_at).limit(limit)).all()
        return [run_view(self._runs.ctx, r) for r in rows]

    def attention(self, *, visible_to: str | None, limit: int = 50) -> list[RunView]:
        """Runs that need an operator (see `attention`), the most recently changed first."""
        filters: list[Any] = [_NEEDS_ATTENTION]
        if visible_to is not None:
            filters.append(seen_by(visible_to))
        q = select(RunRow).where(*filters).order_by(RunRow.updated_at.desc(), RunRow.id.desc())
        with self._ctx.reads() as s:
            rows = s.scalars(q.limit(limit)).all()
        return [run_view(self._runs.ctx, r) for r in rows]

    def privacy(self, run_id: str) -> str:
        return self._runs.snapshot(run_id).privacy

    def privacies(self, run_ids: list[str]) -> dict[str, str]:
        """Each run's privacy level in one query (a list of runs shows each at its level;
        a read per run made `GET /inbox` of 200 waiting runs 200 reads). A run gone
        meanwhile is shown at the level of a snapshot without a plan: fail closed."""
        found: dict[str, str] = {}
        q = select(RunRow.id, RunRow.snapshot)
        with self._ctx.reads() as s:
            for i in range(0, len(run_ids), 500):
                for run_id, raw in s.execute(q.where(RunRow.id.in_(run_ids[i : i + 500]))):
                    found[run_id] = RunSnapshot.parse(raw).privacy
        unknown = RunSnapshot.parse(None).privacy
        return {run_id: found.get(run_id, unknown) for run_id in run_ids}

    def readers(self, run_ids: list[str]) -> dict[str, tuple[str, str]]:
        """(initiator, privacy level) of each run that has a row, in one query: what the
        sign-in codec decides a decode by (api/operator/codec.py). A run without a row is
        absent from the answer."""
        found: dict[str, tuple[str, str]] = {}
        q = select(RunRow.id, RunRow.initiator, RunRow.snapshot)
        with self._ctx.reads() as s:
            for i in range(0, len(run_ids), 500):
                chunk = q.where(RunRow.id.in_(run_ids[i : i + 500]))
                for run_id, initiator, raw in s.execute(chunk):
                    found[run_id] = (initiator, RunSnapshot.parse(raw).privacy)
        return found
