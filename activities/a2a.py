"""The A2A journal, what the worker writes: the run's result onto its task, and the
projection of the run's committed state onto the task view and its journal.

- The result is written by one writer, `_write_result`. The completion calls it through
  `completion_hook`, inside the transaction that completes the run: the task's result and
  the run's completion commit together (or neither: a result the answer ceiling may not
  keep rolls the completion back). Should a run have completed without the hook (a worker
  composed without it), the projection writes the result with the same writer.
- The projection (`A2AActivities.project`, a sync activity on the worker's executor)
  reads committed rows only and writes only what may leave the installation: state,
  status message, stored artifacts, and their journal events. It never runs the model or
  a tool, and re-projecting a revision writes nothing, so retrying it is always safe.

The API process's side (task creation, reads, the journal's reads, push) is store/a2a/."""

import json
import logging
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session
from temporalio import activity

from agentrt.activities._common import ActivityGroup, store_work
from agentrt.contracts.a2a import ProjectRequest, ProjectResult
from agentrt.contracts.enums import EventKind, RunStatus, TerminationReason
from agentrt.contracts.ids import ACT_A2A_PROJECT
from agentrt.contracts.messages import Message
from agentrt.contracts.profiles import stricter
from agentrt.store.a2a.journal import append_event
from agentrt.store.a2a.tasks import seal, unseal
from agentrt.store.a2a.view import (
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
from agentrt.store.db.a2a_tables import A2ATaskRow
from agentrt.store.db.context import CompletionHook, StoreContext, dumps, utcnow
from agentrt.store.db.sealing import Sealer
from agentrt.store.db.tables import EventRow, MessageRow, RunRow
from agentrt.store.runs.answer import answer_ceiling
from agentrt.store.security.sealed import (
    EVENT_PAYLOAD,
    MESSAGE_BODY,
    RUN_ANSWER,
    RUN_OUTPUT,
    TASK_ARTIFACTS,
    TASK_HISTORY,
    TASK_STATUS_MESSAGE,
    within,
)

logger = logging.getLogger(__name__)
NEEDS_INPUT_NOTE = "More information is needed to go on."


class A2AActivities(ActivityGroup):
    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx

    @activity.defn(name=ACT_A2A_PROJECT)
    @store_work
    def project(self, req: ProjectRequest) -> ProjectResult:
        return project(self._ctx, req)


# --- the result ---------------------------------------------------------------------------


def completion_hook(sealer: Sealer) -> CompletionHook:
    """The hook the completion calls for a run that serves a task (read with its row)."""
    serves = (
        select(A2ATaskRow.id)
        .where(A2ATaskRow.workflow_id == RunRow.id)
        .correlate(RunRow)
        .scalar_subquery()
    )

    def store_result(s: Session, run_id: str, answer: str) -> None:
        """Inside the completion transaction. Raises ResultNotRetainableError when the
        run's answer ceiling is metadata/none: the run is not completed, nothing stored."""
        task = s.scalar(
            select(A2ATaskRow).where(A2ATaskRow.workflow_id == run_id).with_for_update()
        )
        if task is None:
            return
        task.run_id = run_id
        level = answer_ceiling(s, run_id)
        sealed = s.scalar(select(RunRow.output).where(RunRow.id == run_id))
        _write_result(sealer, task, keep_text(answer, level), _output(sealer, run_id, sealed))
        s.flush()

    return CompletionHook(store_result, applies=serves)


def _output(sealer: Sealer, run_id: str, sealed: str | None) -> Any:
    """A typed answer's object as the completion stored it (kept at the answer level)."""
    return None if sealed is None else json.loads(RUN_OUTPUT.open(sealer, sealed, run_id))


def _write_result(sealer: Sealer, task: A2ATaskRow, text: str, output: Any = None) -> None:
    """The task's result, already kept at its answer level: the answer artifact (with a
    typed answer's object as a data part beside the text), the final status message (also
    appended to the history, once) and the COMPLETED state."""
    now = utcnow()
    message = agent_message(f"{task.id}:result", task.id, task.context_id, text)
    history = unseal(sealer, TASK_HISTORY, task.id, task.history, [])
    if all(m.get("messageId") != message["messageId"] for m in history):
        history.append(message)
    task.state = COMPLETED
    task.artifacts = seal(sealer, TASK_ARTIFACTS, task.id, [text_artifact(text, output)])
    task.status_message = seal(sealer, TASK_STATUS_MESSAGE, task.id, message)
    task.history = seal(sealer, TASK_HISTORY, task.id, history)
    task.status_at = now
    task.updated_at = now


# --- the projection -----------------------------------------------------------------------


def project(ctx: StoreContext, req: ProjectRequest) -> ProjectResult:
    """The run's committed state onto its task view and journal, once per run revision."""
    run_id, task_id = req.run_id, req.task_id
    with ctx.sessions.begin() as s:
        # Lock order: the run row, then the task row (as the completion transaction does).
        run = s.scalar(select(RunRow).where(RunRow.id == run_id).with_for_update())
        task = s.scalar(select(A2ATaskRow).where(A2ATaskRow.id == task_id).with_for_update())
        if run is None or task is None or task.workflow_id != run_id:
            # Purged, or not this run's task.
            return ProjectResult(run_revision=-1 if run is None else run.revision)
        task.run_id = run_id
        if task.run_revision >= run.revision:
            return ProjectResult(run_revision=run.revision)  # already projected
        written = _apply(ctx, s, run, task, stricter(req.answer_level, run.answer_ceiling))
        task.run_revision = run.revision
        return ProjectResult(run_revision=run.revision, events_written=written)


def _apply(ctx: StoreContext, s: Session, run: RunRow, task: A2ATaskRow, level: str) -> int:
    """What the run's state shows the task, at the answer ceiling `level`: the events
    written (0 when a client would see nothing new)."""
    sealer = ctx.sealer
    reason = TerminationReason(run.termination_reason) if run.termination_reason else None
    state, note, metadata = map_run(RunStatus(run.status), reason)
    artifacts: list[dict[str, Any]] = []
    if state == COMPLETED:
        state, note, metadata, artifacts = _completed(sealer, run, task, level)
    elif RunStatus(run.status) is RunStatus.WAITING_FOR_INPUT:
        note = _question(s, sealer, run.id, level)
    # Keyed: the note can be the model's question, content a plain hash would confirm.
    seen = None if note is None else sealer.mac(note)
    if state == task.projected_state and seen == task.projected_note:
        return 0  # e.g. a fence stamp bumped the revision: nothing a client would see
    now = utcnow()
    message = None
    if note is not None:
        message = agent_message(f"{task.id}:{run.revision}", task.id, task.context_id, note)
        if state == COMPLETED:
            message = unseal(sealer, TASK_STATUS_MESSAGE, task.id, task.status_message, None)
    status_obj = status(state, message, task.status_at if state == COMPLETED else now)
    written = 0
    for slot, art in enumerate(artifacts, start=1):
        payload = artifact_update(task.id, task.context_id, art, {})
        if append_event(
            s, sealer, task, run_revision=run.revision, slot=slot,
            kind="artifact", state=state, payload=payload,
        ) >= 0:  # fmt: skip
            written += 1
    payload = status_update(task.id, task.context_id, status_obj, metadata)
    if append_event(
        s, sealer, task, run_revision=run.revision, slot=0,
        kind="status", state=state, payload=payload,
    ) >= 0:  # fmt: skip
        written += 1
    if message is not None and state != COMPLETED:
        history = unseal(sealer, TASK_HISTORY, task.id, task.history, [])
        if all(m.get("messageId") != message["messageId"] for m in history):
            history.append(message)
            task.history = seal(sealer, TASK_HISTORY, task.id, history)
    task.state = state
    task.status_message = (
        None if message is None else seal(sealer, TASK_STATUS_MESSAGE, task.id, message)
    )
    task.task_metadata = dumps(metadata)
    if state != COMPLETED:
        task.status_at = now
    task.projected_state = state
    task.projected_note = seen
    task.updated_at = now
    return written


def _completed(
    sealer: Sealer, run: RunRow, task: A2ATaskRow, level: str
) -> tuple[str, str | None, dict[str, Any], list[dict[str, Any]]]:
    """COMPLETED: the completion transaction stored the result; journal it."""
    if task.state != COMPLETED or task.artifacts is None:
        # No completion hook ran (a worker composed without it): never COMPLETED empty.
        logger.warning("run %s completed without its A2A result; recovering", run.id)
        if run.answer is None or level not in RETAINABLE_LEVELS:
            return FAILED, NOT_RETAINABLE_NOTE, {"reason": "RESULT_NOT_RETAINABLE"}, []
        answer = RUN_ANSWER.open(sealer, run.answer, run.id)
        _write_result(sealer, task, keep_text(answer, level), _output(sealer, run.id, run.output))
    message = unseal(sealer, TASK_STATUS_MESSAGE, task.id, task.status_message, None)
    text = message["parts"][0]["text"] if message else ""
    return COMPLETED, text, {}, unseal(sealer, TASK_ARTIFACTS, task.id, task.artifacts, [])


def _question(s: Session, sealer: Sealer, run_id: str, level: str) -> str | None:
    """What the run asks, at the answer level: a write's question (a remote agent's
    `input-required`, in the wait's INPUT_REQUESTED event) when the wait is a write's,
    else the model's, the last assistant message's text."""
    asked = _write_question(s, sealer, run_id)
    if asked is not None:
        return keep_text(asked, level) if level in RETAINABLE_LEVELS else NEEDS_INPUT_NOTE
    rows = s.scalars(
        select(MessageRow)
        .where(MessageRow.run_id == run_id, MessageRow.role == "assistant")
        .order_by(MessageRow.sequence.desc())
        .limit(1)
    ).all()
    if not rows:
        return None
    row = rows[0]
    raw = MESSAGE_BODY.open(sealer, row.body, MESSAGE_BODY.row_of(row))
    text = Message.model_validate_json(raw).content
    if level not in RETAINABLE_LEVELS:
        return NEEDS_INPUT_NOTE
    return keep_text(text, level)


def _write_question(s: Session, sealer: Sealer, run_id: str) -> str | None:
    """The question of the wait the run is in, when a write asked it: the run's latest
    INPUT_REQUESTED event (a wait's event is written as it begins). None when the model
    asked, or when the run's privacy level kept no text of it (the event holds only its
    size): the note then says no more than that input is needed."""
    row = s.execute(
        select(EventRow.sequence, EventRow.payload)
        .where(EventRow.run_id == run_id, EventRow.kind == EventKind.INPUT_REQUESTED.value)
        .order_by(EventRow.sequence.desc())
        .limit(1)
    ).first()
    if row is None:
        return None
    payload = json.loads(EVENT_PAYLOAD.open(sealer, row.payload, within(run_id, row.sequence)))
    if "call_id" not in payload:
        return None  # the model asked: its question is its last message
    question = payload.get("question")
    return question if isinstance(question, str) else NEEDS_INPUT_NOTE
