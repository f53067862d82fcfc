"""A remote A2A agent's skills as agentrt tools, called with the a2a-sdk client.

The call's A2A `messageId` and `contextId` are derived from the fence's idempotency key
(stable across every attempt of the call), so a resend after an unknown outcome is the
same message: agentrt's own A2A server answers it with the task the first send made
(api/a2a/first_message.py). A remote that is not agentrt may not deduplicate messages;
the guarantee stops there (docs/guides/remote-agents.md).

The card is fetched and checked against the pinned digest once per worker process (at
start, or at the first call), not at each call: a call is one request, its send. A send
the remote refuses (an error answer saying it refused the request, or an HTTP status
saying the endpoint is not there or will not take it) may mean the agent changed: the
card is fetched and checked again, and a card that changed fails the call with the typed
`card_changed` (nothing was made), as do all later calls until an operator re-pins it. A
card that changed, or a remote that cannot be reached, fails the call with nothing sent
(ToolFailure: the model is told, the run goes on). After the send:
- an answer whose task completed: its artifacts are the result; one that breaks the
  skill's declared output schema is the call's `invalid_output` (an error result; the
  remote acted, so nothing resends it);
- a task that asks for input: ToolNeedsInput with the remote's question; the run pauses
  for the operator's answer, which the same write sends on the same task as its next
  turn (ctx.reply), with a messageId derived from the key and the turn;
- a task that failed or was canceled: an error result, never resent;
- a task the remote rejected, or an error answer that means it refused the request:
  not applied;
- no answer (the connection lost after the send): a plain error, so a non-idempotent
  write's fence marks its outcome unknown and the reconcile probe (RemoteProbe) asks the
  remote for the task in the call's contextId.
"""

import asyncio
import contextlib
import hashlib
from typing import Any

import httpx
from a2a.client.client import Client
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    Task,
    TaskState,
)
from a2a.utils.errors import (
    A2AError,
    ContentTypeNotSupportedError,
    InvalidParamsError,
    InvalidRequestError,
    MethodNotFoundError,
    TaskNotCancelableError,
    UnsupportedOperationError,
)

from agentrt.activities.ports import (
    ToolContext,
    ToolFailedAfterApplying,
    ToolFailure,
    ToolInputError,
    ToolNeedsInput,
)
from agentrt.activities.toolbox.remote_config import RemoteSkill
from agentrt.activities.toolbox.remote_http import NotSent, RemoteConnection
from agentrt.activities.toolbox.remote_stream import followed, parts_text
from agentrt.contracts.enums import TerminationReason, ToolEffect
from agentrt.contracts.messages import ToolSpec
from agentrt.contracts.output import parse_output
from agentrt.contracts.reconcile import Reconciled

ARGS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"message": {"type": "string", "description": "what to ask the agent"}},
    "required": ["message"],
    "additionalProperties": False,
}
TERMINAL = {
    TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED,
    TaskState.TASK_STATE_REJECTED, TaskState.TASK_STATE_INPUT_REQUIRED,
    TaskState.TASK_STATE_AUTH_REQUIRED,
}  # fmt: skip
# Error answers by which a server says it refused the request itself: nothing was made.
REFUSED = (
    InvalidParamsError, InvalidRequestError, MethodNotFoundError,
    ContentTypeNotSupportedError, UnsupportedOperationError,
)  # fmt: skip
# HTTP statuses by which the endpoint says it is not there or will not take the request: the
# agent may have changed, so its card is checked again (the outcome stays as it was).
MOVED = frozenset({401, 403, 404, 405, 410, 415})
POLL_FIRST, POLL_MAX = 0.1, 2.0
INVALID_OUTPUT = TerminationReason.INVALID_OUTPUT.value  # the word a run ends by, for one call


def message_id(idempotency_key: str, turn: int = 0) -> str:
    """The A2A messageId of a call's turn (0: its first message; n: the operator's n-th
    answer to the remote's questions): the same for every attempt of it."""
    seed = b"message:" + idempotency_key.encode() + (b":turn:%d" % turn if turn else b"")
    return "agentrt-m-" + hashlib.sha256(seed).hexdigest()[:40]


def context_id(idempotency_key: str) -> str:
    """The A2A contextId of a call, by which the probe finds its task."""
    return "agentrt-c-" + hashlib.sha256(b"context:" + idempotency_key.encode()).hexdigest()[:40]


def task_text(task: Task) -> str:
    """The task's artifacts as text (data parts as JSON); its status message if none."""
    return parts_text([p for a in task.artifacts for p in a.parts] or task.status.message.parts)


async def until_settled(client: Client, task: Task, ctx: ToolContext, within: float) -> Task:
    """The task once it is terminal (or asks for input), polled with backoff."""
    wait, loop = POLL_FIRST, asyncio.get_running_loop()
    deadline = loop.time() + within
    while task.status.state not in TERMINAL:
        if loop.time() > deadline:
            raise TimeoutError(f"the remote task {task.id} did not finish in {within} s")
        ctx.heartbeat()
        await asyncio.sleep(wait)
        wait = min(wait * 2, POLL_MAX)
        task = await client.get_task(GetTaskRequest(id=task.id))
    return task


class RemoteProbe:
    """A remote write's reconcile probe: the task in the call's contextId, if the remote
    made one. None: not applied (the resend is the same message); one that finished: its
    result; one still working: raises (asked again later)."""

    def __init__(self, conn: RemoteConnection, skill: str, declared: RemoteSkill) -> None:
        self._conn, self._skill, self._declared = conn, skill, declared
        self.__qualname__ = f"{conn.name}.{skill}:task-of-message"

    async def __call__(self, arguments: dict[str, Any], ctx: ToolContext) -> Reconciled:
        client = await self._conn.client()
        listed = await client.list_tasks(
            ListTasksRequest(context_id=context_id(ctx.idempotency_key), include_artifacts=True)
        )
        if not listed.tasks:
            return Reconciled.not_applied()
        task = listed.tasks[0]
        if task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED:
            # Waiting for an answer: the turn is sent again, as the same message (agentrt's
            # server answers a message it holds with the task as it is, asking again).
            return Reconciled.not_applied()
        if task.status.state not in TERMINAL:
            raise RuntimeError(
                f"the remote task {task.id} is still {TaskState.Name(task.status.state)}"
            )
        if task.status.state == TaskState.TASK_STATE_REJECTED:
            return Reconciled.not_applied()
        return Reconciled.applied(result_of(task, self._declared, self._conn.name, self._skill))


def result_of(task: Task, declared: RemoteSkill, agent: str, skill: str) -> str:
    """What the model is told of a settled task; the call's invalid_output when a completed
    answer breaks the declared schema."""
    state = task.status.state
    text = task_text(task)
    if state == TaskState.TASK_STATE_COMPLETED:
        if declared.output_schema is not None:
            _, error = parse_output(text, declared.output_schema)
            if error is not None:
                why = f"answered outside its declared schema ({error})"
                return f"{INVALID_OUTPUT}: {agent}.{skill} {why}"
        return text
    return f"the remote task {task.id} ended {TaskState.Name(state)}: {text}"


class RemoteSkillTool:
    """One skill of a remote agent, satisfying the `Tool` port; `reconcile` is its probe,
    `withdraw` cancels a task that waits for an answer the cancelled run will not give."""

    def __init__(self, conn: RemoteConnection, skill: str, description: str) -> None:
        self._conn = conn
        self._skill = skill
        self._declared = conn.agent.skills.get(skill) or RemoteSkill()
        self.reserve = self._declared.reserve  # a budgeted run reserves it per call
        self.reconcile = RemoteProbe(conn, skill, self._declared)
        self._spec = ToolSpec(
            name=f"{conn.name}.{skill}",
            description=description or f"The remote agent {conn.name}'s skill {skill}.",
            parameters=ARGS_SCHEMA,
            reconcile=self.reconcile.__qualname__,
        )

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    @property
    def effect(self) -> ToolEffect:
        return self._declared.effect

    async def __call__(self, arguments: dict[str, Any], ctx: ToolContext) -> str:
        text = arguments.get("message")
        if set(arguments) != {"message"} or not isinstance(text, str) or not text:
            raise ToolInputError("takes exactly one argument, `message`: a non-empty string")
        # Streamed where the call has a live channel: the remote's text reaches it as it comes.
        client = await self._conn.client(streaming=ctx.emit is not None)  # ToolFailure: not sent
        task = await self._send(client, _message(text, self._skill, ctx), ctx)
        task = await until_settled(client, task, ctx, self._conn.agent.timeout_seconds)
        state = task.status.state
        if state == TaskState.TASK_STATE_INPUT_REQUIRED:
            # The remote waits for an answer: our run pauses for the operator's (the fence
            # emptied, nothing recorded); it comes back as ctx.reply, the next turn.
            question = task_text(task) or "the remote agent asks for input"
            turn = 0 if ctx.reply is None else ctx.reply.turn
            raise ToolNeedsInput(question, task_id=task.id, turn=turn)
        if state == TaskState.TASK_STATE_REJECTED:
            raise ToolFailure(
                f"the remote agent rejected the task: {task_text(task)}", reason="rejected"
            )
        result = result_of(task, self._declared, self._conn.name, self._skill)
        if state != TaskState.TASK_STATE_COMPLETED or result.startswith(INVALID_OUTPUT):
            # The remote acted (or may have): an error result, never sent again.
            raise ToolFailedAfterApplying(result)
        return result

    async def withdraw(self, task_id: str, ctx: ToolContext) -> None:
        """The run that asked was cancelled: the remote task stops waiting for our answer
        (CancelTask). A task that has ended meanwhile stays as it ended."""
        client = await self._conn.client()
        with contextlib.suppress(TaskNotCancelableError):
            await client.cancel_task(CancelTaskRequest(id=task_id))

    async def _send(self, client: Client, message: Message, ctx: ToolContext) -> Task:
        try:
            sent = client.send_message(SendMessageRequest(message=message))
            task = await followed(sent, ctx.emit)
            if task is not None:
                return task
        except NotSent as exc:
            raise ToolFailure(str(exc), reason="remote_down") from None
        except REFUSED as exc:
            await self._conn.recheck()  # ToolFailure card_changed: the agent changed
            raise ToolFailure(
                f"the remote agent refused the message: {exc}", reason="refused"
            ) from None
        except A2AError as exc:
            cause = exc.__cause__
            if isinstance(cause, httpx.ConnectError | httpx.ConnectTimeout):
                raise ToolFailure(
                    "the remote agent cannot be reached", reason="remote_down"
                ) from None
            if isinstance(cause, httpx.HTTPStatusError) and cause.response.status_code in MOVED:
                await self._conn.recheck()  # the endpoint gone: did the agent change?
            raise
        raise RuntimeError("the remote agent answered neither a task nor a message")


def _message(text: str, skill: str, ctx: ToolContext) -> Message:
    """The call's message: its first (the model's text), or the operator's answer to the
    remote's question on the same task (`ctx.reply`), each with its turn's messageId."""
    reply = ctx.reply
    message = Message(
        message_id=message_id(ctx.idempotency_key, 0 if reply is None else reply.turn),
        context_id=context_id(ctx.idempotency_key),
        role=Role.ROLE_USER,
        parts=[Part(text=text if reply is None else reply.text)],
    )
    if reply is not None:
        message.task_id = reply.task_id
    message.metadata.update({"skill": skill})
    return message


def remote_tools(conn: RemoteConnection, card: Any) -> list[RemoteSkillTool]:
    """Every skill of the card as a tool; a declared skill the card lacks is a ValueError
    (the file's mistake, not an outage)."""
    offered = {s.id: s.description for s in card.skills}
    unknown = sorted(set(conn.agent.skills) - set(offered))
    if unknown:
        raise ValueError(
            f"remote agent {conn.name!r}: the card has no skill(s) {unknown} "
            f"(it offers {sorted(offered) or 'none'})"
        )
    return [RemoteSkillTool(conn, skill, text) for skill, text in offered.items()]
