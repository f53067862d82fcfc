"""Tasks over runs: create a task and start its run, continue it with input, wait, cancel.

The web process starts, signals and reads runs; it never runs the agent. Every read comes
from the task view (a2a_task) or the journal, written from committed state.
"""

import asyncio
import time
import uuid

from a2a.types import Message, Role, SendMessageRequest
from a2a.utils.errors import (
    ContentTypeNotSupportedError,
    InternalError,
    InvalidParamsError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from google.protobuf.json_format import MessageToDict
from pydantic import ValidationError
from temporalio.client import WorkflowUpdateFailedError
from temporalio.service import RPCError

from agentrt.api.a2a.convert import message_dict, message_text
from agentrt.api.a2a.errors import ProfileNotGrantedError, ResultNotRetainableError
from agentrt.api.a2a.first_message import first_request_digest, resent
from agentrt.api.a2a.ids import CONTEXT_ID, MESSAGE_ID, TASK_ID, checked_id
from agentrt.api.grants import Grants, refusal
from agentrt.api.settings import ApiSettings
from agentrt.contracts.a2a import InputMessage
from agentrt.contracts.errors import (
    InvalidRequestError,
    NoWorkerError,
    PromptTooLongError,
    RunNotFoundError,
    UnknownProfileError,
)
from agentrt.contracts.registered import RegisteredProfile
from agentrt.contracts.run import prompt_over_cap
from agentrt.contracts.start import StartRequest
from agentrt.starter.facade import AgentRuntime
from agentrt.store.a2a.push import PushSpec
from agentrt.store.a2a.tasks import A2AStore, FirstMessageTaken, TaskRecord
from agentrt.store.a2a.view import INPUT_REQUIRED, INTERRUPTED, RETAINABLE_LEVELS, TERMINAL
from agentrt.store.ops.registry import ProfileRegistry

MESSAGE_TEXT = "the message text"  # what a prompt-cap refusal calls the text
SENDER = "agentrt"  # the metadata key of a follow-up's sender in the task's history


class TaskService:
    def __init__(
        self,
        settings: ApiSettings,
        store: A2AStore,
        runtime: AgentRuntime,
        profiles: ProfileRegistry,
    ) -> None:
        self._settings = settings
        self._store = store
        self._runtime = runtime
        self._profiles = profiles
        self._grants = {who: Grants.of(p) for who, p in settings.api.grants().items()}

    # --- reads -----------------------------------------------------------------------------

    async def get(self, task_id: str, owner: str) -> TaskRecord:
        checked_id(task_id, "The task id", TASK_ID)
        rec = await asyncio.to_thread(self._store.get, task_id, owner)
        if rec is None:
            raise TaskNotFoundError(message=f"Task {task_id} not found")
        return rec

    async def wait(
        self, task_id: str, owner: str, since: int, cap: float | None = None
    ) -> TaskRecord:
        """Until the task is terminal, or interrupted by an event after `since`, or the cap."""
        deadline = time.monotonic() + (
            self._settings.api.blocking_cap_seconds if cap is None else cap
        )
        while True:
            rec = await self.get(task_id, owner)
            if rec.state in TERMINAL or (rec.state in INTERRUPTED and rec.journal_head > since):
                return rec
            if time.monotonic() >= deadline:
                return rec
            await asyncio.sleep(self._settings.api.poll_seconds)

    # --- send ------------------------------------------------------------------------------

    async def _profile(self, params: SendMessageRequest) -> RegisteredProfile:
        """The published profile a message asks for (metadata "skill"), or the default,
        among those the workers registered."""
        skill = _metadata_str(params.message, "skill") or _struct_str(params, "skill")
        registered = await asyncio.to_thread(self._profiles.all)
        published = [p for p in registered.values() if p.publish]
        if not skill:
            if self._settings.api.default_skill:
                skill = self._settings.api.default_skill
            elif len(published) == 1:
                skill = published[0].name
            else:
                raise InvalidParamsError(message="Name a skill in the message metadata 'skill'")
        profile = registered.get(skill)
        if profile is None or not profile.publish:
            raise InvalidParamsError(message=f"Unknown skill {skill!r}")
        if profile.answer_level not in RETAINABLE_LEVELS:
            raise ResultNotRetainableError(data={"skill": skill})
        return profile

    async def create(
        self, params: SendMessageRequest, owner: str, push: PushSpec | None = None
    ) -> tuple[TaskRecord, bool]:
        """A new task, its run started, with its push config (`push`) written in the same
        transaction as the task. Bad input or a refused profile creates nothing. Returns
        (task, repeat): the same caller resending the message that created a task (same
        messageId) gets that task back, and nothing new is created or started. Another
        caller's messageId is never looked at: ids are per caller, so no task leaks."""
        message = params.message
        checked_id(message.context_id, "contextId", CONTEXT_ID)
        first_id = checked_id(message.message_id, "messageId", MESSAGE_ID) or None
        digest = first_request_digest(params)
        if first_id is not None:
            known = await asyncio.to_thread(self._store.first, owner, first_id)
            if known is not None:
                return resent(known, params, digest), True
        text = _checked_parts(message, self._settings)
        profile = await self._profile(params)
        if not self._grants.get(owner, Grants()).allows(profile):
            raise ProfileNotGrantedError(message=refusal(owner, profile))  # nothing created
        task_id, run_id = str(uuid.uuid4()), str(uuid.uuid4())
        start = _start_request(profile.name, text, run_id, self._settings)
        context_id = message.context_id or str(uuid.uuid4())
        stored = message_dict(message)
        stored.update(taskId=task_id, contextId=context_id)
        try:
            rec = await asyncio.to_thread(
                lambda: self._store.create(
                    task_id=task_id, context_id=context_id, workflow_id=run_id, owner=owner,
                    profile=profile.name, answer_level=profile.answer_level, message=stored,
                    push=push, first_message_id=first_id, first_digest=digest,
                )
            )  # fmt: skip
        except FirstMessageTaken as taken:
            # A concurrent resend inserted first: its run, not ours (if it asked the same).
            return resent(taken.task, params, digest), True
        try:
            await self._runtime.submit(start, initiator=f"a2a:{owner}", a2a_task_id=task_id)
        except UnknownProfileError:
            # The API publishes a skill the worker does not declare: a deployment mismatch.
            await asyncio.to_thread(self._store.delete, task_id)
            raise InvalidParamsError(message=f"Skill {profile.name!r} is not served") from None
        except NoWorkerError:
            await asyncio.to_thread(self._store.delete, task_id)
            raise InternalError(message="No worker is serving this agent right now") from None
        except Exception:
            await asyncio.to_thread(self._store.delete, task_id)
            raise InternalError(message="The task's run could not be started") from None
        return rec, False

    async def follow_up(self, params: SendMessageRequest, owner: str) -> tuple[TaskRecord, bool]:
        """A message for a task that asked for more input: continue the same run. Returns
        (task, repeat): a message whose messageId the task already holds is a repeat (a
        client retrying), answered with the task as it is, changing nothing."""
        message = params.message
        rec = await self.get(message.task_id, owner)
        if message.context_id and message.context_id != rec.context_id:
            raise InvalidParamsError(message="contextId does not match the task's context")
        if _holds(rec, message.message_id):
            return rec, True
        if rec.state in TERMINAL:
            raise UnsupportedOperationError(message="The task is in a terminal state")
        if rec.state != INPUT_REQUIRED:
            raise UnsupportedOperationError(message="The task is not waiting for input")
        text = _follow_up_text(message, self._settings)
        try:
            InputMessage(message_id=message.message_id, text=text, sent_by=owner)
        except ValidationError:
            raise InvalidParamsError(message="The message is too long") from None
        stored = message_dict(message)
        stored.update(taskId=rec.id, contextId=rec.context_id)
        # The history says who sent it, as the run records it: the authenticated owner
        # (the API attests the message for them; the run takes none it did not attest).
        meta = stored.get("metadata")
        stored["metadata"] = {**(meta if isinstance(meta, dict) else {}), SENDER: {
            "sentBy": owner, "attested": True}}  # fmt: skip
        added = await asyncio.to_thread(
            lambda: self._store.add_client_message(rec.id, owner, stored, when_state=INPUT_REQUIRED)
        )
        if added is None:
            raise UnsupportedOperationError(message="The task is not waiting for input")
        if not added[1]:
            return added[0], True  # the same message raced in a moment before: a repeat
        try:
            await self._runtime.submit_input(
                rec.workflow_id, message_id=message.message_id, text=text, sent_by=owner
            )
        except (WorkflowUpdateFailedError, RPCError, InvalidRequestError):
            await asyncio.to_thread(self._store.remove_client_message, rec.id, message.message_id)
            raise UnsupportedOperationError(message="The task is not waiting for input") from None
        return rec, False

    # --- cancel ----------------------------------------------------------------------------

    async def cancel(self, task_id: str, owner: str) -> TaskRecord:
        rec = await self.get(task_id, owner)
        if rec.state in TERMINAL:
            raise TaskNotCancelableError(message=f"Task {task_id} is already {rec.state}")
        # The facade's cancel, also for a run not begun yet: it begins, then settles
        # CANCELLED, and the workflow closes CANCELED like any other cancelled run.
        try:
            await self._runtime.cancel(
                rec.workflow_id, by=f"a2a:{owner}", reason="canceled by the A2A client"
            )
        except RunNotFoundError:
            raise TaskNotCancelableError(message=f"Task {task_id} has no run to cancel") from None
        done = await self.wait(task_id, owner, since=rec.journal_head, cap=30.0)
        return done


def _holds(rec: TaskRecord, message_id: str) -> bool:
    return any(m.get("messageId") == message_id for m in rec.history)


def _checked_parts(message: Message, caps: ApiSettings) -> str:
    """The message's text, once its role, its parts' kinds and each part's length pass."""
    if message.role != Role.ROLE_USER:
        raise InvalidParamsError(message="Only messages with role ROLE_USER are accepted")
    kinds = {p.WhichOneof("content") for p in message.parts}
    if kinds - {"text"}:
        raise ContentTypeNotSupportedError(message="Only text parts are supported")
    # The caps (issue 25), before anything is stored or started: a long text would hold
    # the worker's guardrails and ride in every history and row of its run.
    for part in message.parts:
        too_long = prompt_over_cap(
            part.text, caps.limits.max_part_chars, "a text part", "AGENTRT_MAX_PART_CHARS"
        )
        if too_long is not None:
            raise InvalidParamsError(message=f"prompt_too_long: {too_long}")
    text = message_text(message).strip()
    if not text:
        raise InvalidParamsError(message="The message has no text")
    return text


def _start_request(profile: str, text: str, run_id: str, caps: ApiSettings) -> StartRequest:
    """The start a new task's first message asks for: the one start validation, its prompt
    cap included; a refusal is invalid params, and nothing is created."""
    fields = {"profile": profile, "prompt": text, "run_id": run_id}
    try:
        return StartRequest.checked(caps.limits.max_prompt_chars, fields, prompt_name=MESSAGE_TEXT)
    except PromptTooLongError as exc:
        raise InvalidParamsError(message=f"prompt_too_long: {exc}") from None
    except InvalidRequestError as exc:
        raise InvalidParamsError(message=str(exc)) from None


def _follow_up_text(message: Message, caps: ApiSettings) -> str:
    """A follow-up's text (input to a waiting run, not a start), under the same caps."""
    text = _checked_parts(message, caps)
    too_long = prompt_over_cap(text, caps.limits.max_prompt_chars, MESSAGE_TEXT)
    if too_long is not None:
        raise InvalidParamsError(message=f"prompt_too_long: {too_long}")
    return text


def _metadata_str(message: Message, key: str) -> str:
    value = MessageToDict(message.metadata).get(key) if message.HasField("metadata") else None
    return value if isinstance(value, str) else ""


def _struct_str(params: SendMessageRequest, key: str) -> str:
    value = MessageToDict(params.metadata).get(key) if params.HasField("metadata") else None
    return value if isinstance(value, str) else ""
