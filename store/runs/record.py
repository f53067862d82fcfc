"""Run rows, the transcript and the event log: inserts are idempotent on their unique keys."""

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, func, literal, select, union_all

from agentrt.contracts.deferred import DeferredStep
from agentrt.contracts.enums import EventKind, RunStatus
from agentrt.contracts.errors import RunNotFoundError
from agentrt.contracts.messages import Message
from agentrt.contracts.profiles import stricter
from agentrt.contracts.run import TurnRecord
from agentrt.contracts.snapshot import RunSnapshot, SnapshotRecord
from agentrt.contracts.views import EventView, RunView
from agentrt.store.db.context import StoreContext, as_utc, insert_ignoring, utcnow
from agentrt.store.db.sealing import Sealer
from agentrt.store.db.tables import EventRow, MessageRow, RunRow, in_sequence
from agentrt.store.runs.view import run_view
from agentrt.store.security.sealed import (
    EVENT_PAYLOAD,
    MESSAGE_BODY,
    within,
)
from agentrt.store.steps.deferred import riding
from agentrt.store.steps.events import event_row
from agentrt.store.steps.messages import message_row
from agentrt.store.steps.write import Part, write_step, write_steps

# A model call's inputs in one round trip: the run's snapshot as "sequence -1", then the
# transcript up to the call's own sequence.
_SNAPSHOT_AT = -1
_TURN_INPUTS = union_all(
    select(literal(_SNAPSHOT_AT).label("sequence"), RunRow.snapshot.label("body")).where(
        RunRow.id == bindparam("run_id")
    ),
    select(MessageRow.sequence, MessageRow.body).where(
        MessageRow.run_id == bindparam("run_id"), MessageRow.sequence <= bindparam("upto")
    ),
).order_by("sequence")

_CHILDREN = (
    select(RunRow.id)
    .where(RunRow.parent_run_id == bindparam("run_id"))
    .order_by(RunRow.created_at, RunRow.id)
)


@dataclass(frozen=True, slots=True, kw_only=True)
class NewRun:
    """A run to insert: its profile as resolved (`snapshot`), the user's prompt (checked by
    the input guardrails) and who started it, recorded at the run's privacy level."""

    run_id: str
    profile: str
    snapshot: SnapshotRecord
    prompt: str
    initiator: str
    privacy: str
    parent_run_id: str | None = None  # a child run's parent (contracts/agents.py)


class RunStore:
    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx

    @property
    def sealer(self) -> Sealer:
        """The store's key: a client holding it attests its decisions (store/security/attest.py)."""
        return self._ctx.sealer

    @property
    def ctx(self) -> StoreContext:
        """The store it reads: the facade reads the profile registry through it too."""
        return self._ctx

    # --- writes -------------------------------------------------------------------------

    def begin(self, new: NewRun) -> bool:
        """Insert the run, its first event and the user's message. Idempotent on the uuid.

        Returns True when this call created the run.
        """
        self._ctx.faults("begin.before_write")
        now = utcnow()
        run_id, profile, prompt = new.run_id, new.profile, new.prompt
        run = {
            "id": run_id,
            "profile": profile,
            "status": RunStatus.RUNNING.value,
            "iterations": 0,
            "truncated": False,
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "snapshot": new.snapshot.model_dump_json(),
            "initiator": new.initiator,
            "created_at": now,
            "updated_at": now,
            "revision": 0,
            "parent_run_id": new.parent_run_id,
        }
        started = {"profile": profile, "initiator": new.initiator, "prompt": prompt}
        if new.parent_run_id is not None:
            started["parent_run_id"] = new.parent_run_id
        first = event_row(
            self._ctx.sealer, run_id, 0, EventKind.RUN_STARTED, 0, started, new.privacy
        )
        created = write_step(
            self._ctx,
            [
                Part("run", run),
                Part("message", self.message_row(run_id, 0, Message(role="user", content=prompt))),
                Part("event", first),
            ],
        )
        self._ctx.faults("begin.after_write")
        return created

    def record_turn(self, run_id: str, turn: TurnRecord) -> None:
        """A model turn's rows and the reads that ride with it (`turn.pending`), all or none
        (a retried call's duplicates add nothing)."""
        write_steps(self._ctx, [*riding(run_id, turn.pending), self.turn_parts(run_id, turn)])

    def turn_parts(self, run_id: str, turn: TurnRecord) -> list[Part]:
        """A model turn's rows: its message and its `llm` event."""
        return [
            Part("message", self.message_row(run_id, turn.sequence, turn.message)),
            Part("event", self.llm_event_row(run_id, turn)),
        ]

    def llm_event_row(self, run_id: str, turn: TurnRecord) -> dict[str, Any]:
        """A model turn's `llm` event row."""
        return event_row(self._ctx.sealer, run_id, turn.sequence, EventKind.LLM, turn.round,
                         turn.payload, turn.privacy, turn.duration_ms)  # fmt: skip

    def message_row(self, run_id: str, sequence: int, message: Message) -> dict[str, Any]:
        """A transcript row's columns, its body sealed (store/steps/messages.py)."""
        return message_row(self._ctx.sealer, run_id, sequence, message)

    def append_message(self, s: Any, run_id: str, sequence: int, message: Message) -> None:
        s.execute(
            insert_ignoring(s, MessageRow.__table__, ["run_id", "sequence"]),
            self.message_row(run_id, sequence, message),
        )

    # --- reads --------------------------------------------------------------------------

    def snapshot(self, run_id: str) -> RunSnapshot:
        """The profile as resolved at begin, read from the row: for the API's views (and the
        write activity, until the fence unit takes the plan from its request)."""
        with self._ctx.reads() as s:
            raw = s.scalar(select(RunRow.snapshot).where(RunRow.id == run_id))
        if raw is None:
            raise RunNotFoundError(run_id)
        return RunSnapshot.parse(raw)

    def transcript(self, run_id: str, *, upto: int | None = None) -> list[Message]:
        q = select(MessageRow).where(MessageRow.run_id == run_id).order_by(MessageRow.sequence)
        if upto is not None:
            q = q.where(MessageRow.sequence < upto)
        with self._ctx.reads() as s:
            rows = s.scalars(q).all()
        return [self._open_message(r) for r in rows]

    def turn_inputs(
        self, run_id: str, sequence: int, pending: Sequence[DeferredStep] = ()
    ) -> tuple[RunSnapshot, list[Message], Message | None]:
        """In one query: the run's snapshot (its instructions, tool specs and guardrails;
        the plan itself travels in the model request), the transcript before `sequence`,
        and the message already recorded at `sequence` (a retried model call), if any.
        Every model call makes it: a built statement and plain rows (no ORM objects).
        `pending`: the reads riding with this call, not yet stored, in the transcript at
        their sequences (a stored row at the same sequence is the same step: it wins)."""
        with self._ctx.read_rows() as c:
            rows = c.execute(_TURN_INPUTS, {"run_id": run_id, "upto": sequence}).all()
        if not rows or rows[0][0] != _SNAPSHOT_AT:
            raise RunNotFoundError(run_id)
        snapshot = RunSnapshot.parse(rows[0][1])
        bodies: dict[int, str] = {int(seq): str(body) for seq, body in rows[1:]}
        for step in pending:
            bodies.setdefault(step.sequence, step.body)
        recorded = bodies.pop(sequence, None)
        messages = [self.open_body(run_id, seq, bodies[seq]) for seq in sorted(bodies)]
        answer = None if recorded is None else self.open_body(run_id, sequence, recorded)
        return snapshot, messages, answer

    def _open_message(self, row: MessageRow) -> Message:
        return self.open_body(row.run_id, row.sequence, row.body)

    def open_body(self, run_id: str, sequence: int, body: str) -> Message:
        """A stored message body, unsealed."""
        raw = MESSAGE_BODY.open(self._ctx.sealer, body, within(run_id, sequence))
        return Message.model_validate_json(raw)

    def status(self, run_id: str) -> RunStatus | None:
        with self._ctx.reads() as s:
            raw = s.scalar(select(RunRow.status).where(RunRow.id == run_id))
        return None if raw is None else RunStatus(raw)

    def get(self, run_id: str) -> RunView | None:
        """The run, with the child runs it started (oldest first)."""
        with self._ctx.reads() as s:
            row = s.get(RunRow, run_id)
            children = [] if row is None else list(s.scalars(_CHILDREN, {"run_id": run_id}))
        if row is None:
            return None
        return run_view(self._ctx, row).model_copy(update={"children": children})

    def events(self, run_id: str, after_position: int = -1, limit: int = 1000) -> list[EventView]:
        """The run's events committed after the one at `after_position`, in commit order: a
        follower that resumes from the last position it read misses none and repeats none,
        whatever order their sequences were reserved in (migration 0018)."""
        query = select(EventRow).where(EventRow.run_id == run_id)
        with self._ctx.reads() as s:
            rows = s.scalars(in_sequence(query, EventRow.position, after_position, limit)).all()
        return [
            EventView(
                run_id=r.run_id,
                sequence=r.sequence,
                position=r.position if r.position is not None else r.sequence,
                kind=EventKind(r.kind),
                round=r.round,
                duration_ms=r.duration_ms,
                payload=self.open_payload(r.run_id, r.sequence, r.payload),
                created_at=as_utc(r.created_at) or utcnow(),
            )
            for r in rows
        ]

    def sequence_upto(self, run_id: str, position: int) -> int:
        """The highest sequence among the run's events up to `position` (-1 for none): a
        resumed live follow's mark of the turns already committed."""
        q = select(func.max(EventRow.sequence)).where(
            EventRow.run_id == run_id, EventRow.position <= position
        )
        with self._ctx.reads() as s:
            found = s.scalar(q)
        return -1 if found is None else int(found)

    def event_payload(self, run_id: str, sequence: int) -> dict[str, Any] | None:
        with self._ctx.reads() as s:
            raw = s.scalar(
                select(EventRow.payload).where(
                    EventRow.run_id == run_id, EventRow.sequence == sequence
                )
            )
        return None if raw is None else self.open_payload(run_id, sequence, raw)

    def open_payload(self, run_id: str, sequence: int, raw: str) -> dict[str, Any]:
        """A stored event payload, unsealed: every reader sees the JSON that was written."""
        return dict(json.loads(EVENT_PAYLOAD.open(self._ctx.sealer, raw, within(run_id, sequence))))

    def inbox(self, limit: int = 50) -> list[RunView]:
        """Waiting runs, oldest first, each with its pending calls."""
        with self._ctx.reads() as s:
            rows = s.scalars(
                select(RunRow)
                .where(RunRow.status == RunStatus.WAITING_FOR_APPROVAL.value)
                .order_by(RunRow.waiting_since, RunRow.created_at)
                .limit(limit)
            ).all()
        return [run_view(self._ctx, r) for r in rows]

    def tighten_ceiling(self, run_id: str, level: str) -> str:
        """Move the run's answer ceiling to `level` if that is stricter; returns the ceiling
        now in force. Row-locked, so a concurrent completion reads the settled value."""
        with self._ctx.sessions.begin() as s:
            row = s.scalar(select(RunRow).where(RunRow.id == run_id).with_for_update())
            if row is None:
                raise RunNotFoundError(run_id)
            ceiling = stricter(level, row.answer_ceiling)
            if ceiling != row.answer_ceiling:
                row.answer_ceiling = ceiling
                row.updated_at = utcnow()
            return ceiling
