"""Our A2A RequestHandler: the SDK's transport calls it; it reads our task view and
journal and starts, continues and cancels runs through Temporal. No SDK executor, no SDK
task store."""

import asyncio
import uuid
from collections.abc import AsyncGenerator
from datetime import UTC

from a2a.server.context import ServerCallContext
from a2a.server.events.event_queue import Event
from a2a.server.request_handlers.request_handler import RequestHandler, validate_request_params
from a2a.types import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)
from a2a.utils.errors import (
    ExtendedAgentCardNotConfiguredError,
    InvalidParamsError,
    TaskNotFoundError,
    UnsupportedOperationError,
)

from agentrt.api.a2a.convert import task_proto
from agentrt.api.a2a.errors import database_guard
from agentrt.api.a2a.ids import CONFIG_ID, CONTEXT_ID, TASK_ID, checked_id
from agentrt.api.a2a.push import config_proto, policy, push_spec
from agentrt.api.a2a.streams import journal_stream, resume_position
from agentrt.api.a2a.tasks import TaskService
from agentrt.api.settings import ApiSettings
from agentrt.api.wake import Waker
from agentrt.store.a2a.journal import A2AJournal
from agentrt.store.a2a.push import A2APushStore, PushConfig, PushSpec
from agentrt.store.a2a.tasks import A2AStore, parse_cursor
from agentrt.store.a2a.view import TERMINAL

CALLER = "caller"


def _caller(context: ServerCallContext) -> str:
    caller = context.state.get(CALLER)
    if not isinstance(caller, str) or not caller:
        raise UnsupportedOperationError(message="Unauthenticated")  # the guard prevents this
    return caller


def _history_length(has: bool, value: int) -> int | None:
    if not has:
        return None
    if value < 0:
        raise InvalidParamsError(message="historyLength may not be negative")
    return value


def _config_found(cfg: PushConfig | None, missing: str) -> TaskPushNotificationConfig:
    """The push config as A2A has it; with none, TaskNotFoundError saying what is `missing`."""
    if cfg is None:
        raise TaskNotFoundError(message=missing)
    return config_proto(cfg)


@database_guard
class A2AHandler(RequestHandler):
    def __init__(
        self,
        settings: ApiSettings,
        tasks: TaskService,
        store: A2AStore,
        journal: A2AJournal,
        push: A2APushStore,
    ) -> None:
        self._settings = settings
        self._tasks = tasks
        self._store = store
        self._journal = journal
        self._push = push
        self.waker: Waker | None = None  # set by the app: streams wake on commits
        self._policy = policy(settings)

    # --- send ------------------------------------------------------------------------------

    async def _send(self, params: SendMessageRequest, owner: str) -> tuple[str, int, bool]:
        """Create or continue a task; returns (task id, the journal position it started at,
        whether the message was a repeat that changed nothing: a follow-up the task holds,
        or the same caller's first message resent)."""
        spec = None  # checked in full before anything is created
        if params.configuration.HasField("task_push_notification_config"):
            inline = params.configuration.task_push_notification_config
            spec = push_spec(inline, self._policy, str(uuid.uuid4()))
        repeat = False
        if params.message.task_id:
            rec, repeat = await self._tasks.follow_up(params, owner)
            if spec is not None and not repeat:
                await self._save_config(rec.id, spec, from_start=False)
        else:
            rec, repeat = await self._tasks.create(params, owner, push=spec)
        return rec.id, rec.journal_head, repeat

    @validate_request_params
    async def on_message_send(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> Task | Message:
        owner = _caller(context)
        cfg = params.configuration
        history = _history_length(cfg.HasField("history_length"), cfg.history_length)
        task_id, since, repeat = await self._send(params, owner)
        if cfg.return_immediately or repeat:
            rec = await self._tasks.get(task_id, owner)
        else:
            rec = await self._tasks.wait(task_id, owner, since)
        return task_proto(rec, history)

    @validate_request_params
    async def on_message_send_stream(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event]:
        owner = _caller(context)
        task_id, since, repeat = await self._send(params, owner)
        if repeat:  # a retried message: the task as it is, and nothing more to follow
            yield task_proto(await self._tasks.get(task_id, owner))
            return
        async for event in journal_stream(
            self._journal, task_id, start=since, hold_until=since,
            poll=self._settings.api.poll_seconds, waker=self.waker,
        ):  # fmt: skip
            yield event

    @validate_request_params
    async def on_subscribe_to_task(
        self, params: SubscribeToTaskRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event]:
        owner = _caller(context)
        rec = await self._tasks.get(params.id, owner)
        after = resume_position(context.state.get("headers", {}))
        start = rec.journal_head if after is None else min(after, rec.journal_head)
        if rec.state in TERMINAL and start >= rec.journal_head:
            raise UnsupportedOperationError(message="The task is in a terminal state")
        async for event in journal_stream(
            self._journal, rec.id, start=start, hold_until=None,
            poll=self._settings.api.poll_seconds, waker=self.waker,
        ):  # fmt: skip
            yield event

    # --- read ------------------------------------------------------------------------------

    @validate_request_params
    async def on_get_task(self, params: GetTaskRequest, context: ServerCallContext) -> Task | None:
        history = _history_length(params.HasField("history_length"), params.history_length)
        rec = await self._tasks.get(params.id, _caller(context))
        return task_proto(rec, history)

    @validate_request_params
    async def on_list_tasks(
        self, params: ListTasksRequest, context: ServerCallContext
    ) -> ListTasksResponse:
        owner = _caller(context)
        size = params.page_size if params.HasField("page_size") else 50
        if not 1 <= size <= 100:
            raise InvalidParamsError(message="pageSize must be between 1 and 100")
        history = _history_length(params.HasField("history_length"), params.history_length)
        checked_id(params.context_id, "contextId", CONTEXT_ID)
        if params.page_token:
            try:
                checked_id(parse_cursor(params.page_token)[1], "pageToken", TASK_ID)
            except (ValueError, InvalidParamsError):
                raise InvalidParamsError(message="Unknown pageToken") from None
        since = None
        if params.HasField("status_timestamp_after"):
            since = params.status_timestamp_after.ToDatetime(tzinfo=UTC)
        state = TaskState.Name(params.status) if params.status else None
        page = await asyncio.to_thread(
            lambda: self._store.page(
                owner=owner, context_id=params.context_id or None, state=state, since=since,
                page_size=size, token=params.page_token,
            )
        )  # fmt: skip
        artifacts = params.include_artifacts if params.HasField("include_artifacts") else False
        return ListTasksResponse(
            tasks=[task_proto(r, history, artifacts=artifacts) for r in page.tasks],
            next_page_token=page.next_token,
            page_size=size,
            total_size=page.total,
        )

    @validate_request_params
    async def on_cancel_task(
        self, params: CancelTaskRequest, context: ServerCallContext
    ) -> Task | None:
        rec = await self._tasks.cancel(params.id, _caller(context))
        return task_proto(rec)

    # --- push configs ----------------------------------------------------------------------

    async def _save_config(
        self, task_id: str, spec: PushSpec, *, from_start: bool
    ) -> TaskPushNotificationConfig:
        stored = await asyncio.to_thread(
            lambda: self._push.upsert(
                task_id=task_id, config_id=spec.config_id, url=spec.url, token=spec.token,
                auth_scheme=spec.auth_scheme, auth_credentials=spec.auth_credentials,
                from_start=from_start,
            )
        )  # fmt: skip
        return _config_found(stored, f"Task {task_id} not found")

    async def _config_of(self, task_id: str, config_id: str, context: ServerCallContext) -> str:
        """The id of the caller's task `task_id` (else TaskNotFoundError), for a request
        about its push config `config_id`, whose id is checked after."""
        rec = await self._tasks.get(task_id, _caller(context))
        checked_id(config_id, "The push config id", CONFIG_ID)
        return rec.id

    @validate_request_params
    async def on_create_task_push_notification_config(
        self, params: TaskPushNotificationConfig, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        spec = push_spec(params, self._policy, str(uuid.uuid4()))
        rec = await self._tasks.get(params.task_id, _caller(context))
        return await self._save_config(rec.id, spec, from_start=False)

    @validate_request_params
    async def on_get_task_push_notification_config(
        self, params: GetTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        task_id = await self._config_of(params.task_id, params.id, context)
        cfg = await asyncio.to_thread(self._push.get, task_id, params.id)
        return _config_found(cfg, f"No push config {params.id} on task {task_id}")

    @validate_request_params
    async def on_list_task_push_notification_configs(
        self, params: ListTaskPushNotificationConfigsRequest, context: ServerCallContext
    ) -> ListTaskPushNotificationConfigsResponse:
        rec = await self._tasks.get(params.task_id, _caller(context))
        configs = await asyncio.to_thread(self._push.configs, rec.id)
        return ListTaskPushNotificationConfigsResponse(configs=[config_proto(c) for c in configs])

    @validate_request_params
    async def on_delete_task_push_notification_config(
        self, params: DeleteTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> None:
        task_id = await self._config_of(params.task_id, params.id, context)
        await asyncio.to_thread(self._push.delete, task_id, params.id)

    async def on_get_extended_agent_card(
        self, params: GetExtendedAgentCardRequest, context: ServerCallContext
    ) -> AgentCard:
        raise ExtendedAgentCardNotConfiguredError()
