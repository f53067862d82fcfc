"""The projector: the run's committed state → the task view and journal, once per revision.

Reads only committed rows (run status, termination reason, the stored question or result)
and writes only what may leave the installation: state, status message, stored artifacts.
It never runs the model or a tool; re-projecting a revision writes nothing.
"""

import logging
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from agentrt.contracts.enums import RunStatus, TerminationReason
from agentrt.contracts.messages import Message
from agentrt.store.a2a import A2AStore
from agentrt.store.a2a_journal import append_event
from agentrt.store.a2a_rows import A2ATaskRow
from agentrt.store.a2a_view import (
    COMPLETED,
    FAILED,
    NOT_RETAINABLE_NOTE,
    RETAINABLE_LEVELS,
    agent_message,
    artifact_update,
    keep_text,
    map_run,
    status,
    status_update,
    text_artifact,
)
from agentrt.store.answer import ceiling_of
from agentrt.store.context import StoreContext, dumps, utcnow
from agentrt.store.rows import MessageRow, RunRow
from agentrt.store.sealed import (
    MESSAGE_BODY,
    RUN_ANSWER,
    TASK_ARTIFACTS,
    TASK_HISTORY,
    TASK_STATUS_MESSAGE,
)

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Projected:
    run_revision: int
    events_written: int


class A2AProjector:
    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx
        self._tasks = A2AStore(ctx)

    def project(self, *, run_id: str, task_id: str) -> Projected:
        with self._ctx.sessions.begin() as s:
            # Lock order: the run row, then the task row (as the completion transaction does).
            run = s.scalar(select(RunRow).where(RunRow.id == run_id).with_for_update())
            task = s.scalar(select(A2ATaskRow).where(A2ATaskRow.id == task_id).with_for_update())
            if run is None or task is None or task.workflow_id != run_id:
                return Projected(-1 if run is None else run.revision, 0)  # purged / not ours
            task.run_id = run_id
            if task.run_revision >= run.revision:
                return Projected(run.revision, 0)  # this revision is already projected
            written = self._apply(s, run, task)
            task.run_revision = run.revision
            return Projected(run.revision, written)

    def _apply(self, s: Session, run: RunRow, task: A2ATaskRow) -> int:
        reason = TerminationReason(run.termination_reason) if run.termination_reason else None
        state, note, metadata = map_run(RunStatus(run.status), reason)
        level = ceiling_of(run.snapshot, run.answer_ceiling)
        artifacts: list[dict[str, Any]] = []
        if state == COMPLETED:
            state, note, metadata, artifacts = self._completed(run, task, level)
        elif RunStatus(run.status) is RunStatus.WAITING_FOR_INPUT:
            note = _question(s, self._ctx, run.id, level)
        # Keyed: the note can be the model's question, content a plain hash would confirm.
        seen = None if note is None else self._ctx.sealer.mac(note)
        if state == task.projected_state and seen == task.projected_note:
            return 0  # e.g. a fence stamp bumped the revision: nothing a client would see
        now = utcnow()
        message = None
        if note is not None:
            message = agent_message(f"{task.id}:{run.revision}", task.id, task.context_id, note)
            if state == COMPLETED:
                sealed = task.status_message
                message = self._tasks.unseal(TASK_STATUS_MESSAGE, task.id, sealed, None)
        status_obj = status(state, message, task.status_at if state == COMPLETED else now)
        written = 0
        for slot, art in enumerate(artifacts, start=1):
            payload = artifact_update(task.id, task.context_id, art, {})
            if append_event(
                s, self._ctx.sealer, task, run_revision=run.revision, slot=slot,
                kind="artifact", state=state, payload=payload,
            ) >= 0:  # fmt: skip
                written += 1
        payload = status_update(task.id, task.context_id, status_obj, metadata)
        if append_event(
            s, self._ctx.sealer, task, run_revision=run.revision, slot=0,
            kind="status", state=state, payload=payload,
        ) >= 0:  # fmt: skip
            written += 1
        if message is not None and state != COMPLETED:
            history = self._tasks.unseal(TASK_HISTORY, task.id, task.history, [])
            if all(m.get("messageId") != message["messageId"] for m in history):
                history.append(message)
                task.history = self._tasks.seal(TASK_HISTORY, task.id, history)
        task.state = state
        task.status_message = (
            None if message is None else self._tasks.seal(TASK_STATUS_MESSAGE, task.id, message)
        )
        task.task_metadata = dumps(metadata)
        if state != COMPLETED:
            task.status_at = now
        task.projected_state = state
        task.projected_note = seen
        task.updated_at = now
        return written

    def _completed(
        self, run: RunRow, task: A2ATaskRow, level: str
    ) -> tuple[str, str | None, dict[str, Any], list[dict[str, Any]]]:
        """COMPLETED: the result was stored by the completion transaction; journal it."""
        if task.state == COMPLETED and task.artifacts is not None:
            message = self._tasks.unseal(TASK_STATUS_MESSAGE, task.id, task.status_message, None)
            text = message["parts"][0]["text"] if message else ""
            artifacts = self._tasks.unseal(TASK_ARTIFACTS, task.id, task.artifacts, [])
            return COMPLETED, text, {}, artifacts
        # No completion hook ran (a worker without the A2A hook): never COMPLETED empty.
        logger.warning("run %s completed without its A2A result; recovering", run.id)
        if run.answer is None or level not in RETAINABLE_LEVELS:
            return FAILED, NOT_RETAINABLE_NOTE, {"reason": "RESULT_NOT_RETAINABLE"}, []
        answer = RUN_ANSWER.open(self._ctx.sealer, run.answer, run.id)
        text = keep_text(answer, level)
        message = agent_message(f"{task.id}:result", task.id, task.context_id, text)
        task.artifacts = self._tasks.seal(TASK_ARTIFACTS, task.id, [text_artifact(text)])
        task.status_message = self._tasks.seal(TASK_STATUS_MESSAGE, task.id, message)
        history = self._tasks.unseal(TASK_HISTORY, task.id, task.history, [])
        task.history = self._tasks.seal(TASK_HISTORY, task.id, [*history, message])
        task.state = COMPLETED
        task.status_at = utcnow()
        return COMPLETED, text, {}, [text_artifact(text)]


def _question(s: Session, ctx: StoreContext, run_id: str, level: str) -> str | None:
    """The model's question: the last assistant message's text, at the answer level."""
    rows = s.scalars(
        select(MessageRow)
        .where(MessageRow.run_id == run_id, MessageRow.role == "assistant")
        .order_by(MessageRow.sequence.desc())
        .limit(1)
    ).all()
    if not rows:
        return None
    row = rows[0]
    raw = MESSAGE_BODY.open(ctx.sealer, row.body, MESSAGE_BODY.row_of(row))
    text = Message.model_validate_json(raw).content
    if level not in RETAINABLE_LEVELS:
        return "More information is needed to go on."
    return keep_text(text, level)
