"""Schedules of runs (issue 44) over Temporal Schedules: create, list, show, pause, resume,
trigger, backfill and delete, for the CLI (`agentrt schedules ...`) and the operator API.

Each is a Temporal Schedule (so Temporal Web shows it, with its fires) whose action starts
the `ScheduledFire` workflow; its memo says it is a schedule of runs, who created it, the
profile and the spec, so a list names them without decoding the action (which holds the
prompt, encrypted under the payload keys). Everything is checked before the one create
call: a bad spec (Temporal's own check of a cron), an unknown profile or one this client
cannot start leaves nothing behind. Schedules that are not ours (the retention pass) are
invisible here: ScheduleNotFoundError, never touched."""

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from temporalio.client import (
    Client,
    Schedule,
    ScheduleActionStartWorkflow,
    ScheduleAlreadyRunningError,
    ScheduleBackfill,
    ScheduleDescription,
    ScheduleHandle,
    ScheduleIntervalSpec,
    ScheduleOverlapPolicy,
    SchedulePolicy,
    ScheduleSpec,
    ScheduleState,
)
from temporalio.service import RPCError, RPCStatusCode

from agentrt.contracts.errors import (
    InvalidRequestError,
    ScheduleExistsError,
    ScheduleNotFoundError,
)
from agentrt.contracts.ids import WORKFLOW_SCHEDULED_FIRE
from agentrt.contracts.registered import RegisteredProfile
from agentrt.contracts.schedules import (
    KIND_RUNS,
    MEMO_CREATED_BY,
    MEMO_KIND,
    MEMO_PROFILE,
    MEMO_SPEC,
    FireInput,
    ScheduleRequest,
    ScheduleView,
    fire_run_id,
    initiator_of,
    parse_every,
)
from agentrt.starter.facade import AgentRuntime

MEMO_OVERLAP = "overlap"
RECENT_SHOWN = 10


def overlap_policy(name: str) -> ScheduleOverlapPolicy:
    return ScheduleOverlapPolicy[name.upper()]


def _spec(request: ScheduleRequest) -> ScheduleSpec:
    if request.every is not None:
        return ScheduleSpec(intervals=[ScheduleIntervalSpec(every=parse_every(request.every))])
    return ScheduleSpec(cron_expressions=[request.cron or ""])


def _memo(request: ScheduleRequest, created_by: str) -> dict[str, str]:
    return {
        MEMO_KIND: KIND_RUNS,
        MEMO_CREATED_BY: created_by,
        MEMO_PROFILE: request.profile,
        MEMO_SPEC: request.spec_text(),
        MEMO_OVERLAP: request.overlap,
    }


def _not_found(name: str) -> ScheduleNotFoundError:
    return ScheduleNotFoundError(f"no schedule of runs {name!r}")


class RunSchedules:
    """The schedules of runs of one deployment, through `runtime` (its client, its profile
    registry and the checks a start makes)."""

    def __init__(self, runtime: AgentRuntime) -> None:
        self._runtime = runtime
        self._client: Client = runtime.client

    async def create(
        self,
        request: ScheduleRequest,
        *,
        created_by: str,
        registered: RegisteredProfile | None = None,
    ) -> ScheduleView:
        """Create the schedule `request` asks for, as `created_by`; bad input (the spec,
        the profile) raises a typed error and creates nothing."""
        profile = await self._runtime.startable(request.profile, registered)
        fire = FireInput(
            schedule_id=request.name,
            profile=request.profile,
            prompt=request.prompt,
            max_iterations=request.max_iterations,
            initiator=initiator_of(request.name, created_by),
            task_queue=self._runtime.queue_of(profile),
        )
        schedule = Schedule(
            action=ScheduleActionStartWorkflow(
                WORKFLOW_SCHEDULED_FIRE,
                fire,
                id=request.name,  # each fire: `<name>-<scheduled time>`
                task_queue=fire.task_queue,
                static_summary=f"fire of schedule {request.name} ({request.profile})",
            ),
            spec=_spec(request),
            policy=SchedulePolicy(overlap=overlap_policy(request.overlap)),
            state=ScheduleState(paused=request.paused, note=request.note),
        )
        try:
            await self._client.create_schedule(
                request.name, schedule, memo=_memo(request, created_by)
            )
        except ScheduleAlreadyRunningError:
            raise ScheduleExistsError(f"a schedule named {request.name!r} exists") from None
        except RPCError as err:
            if err.status is RPCStatusCode.INVALID_ARGUMENT:
                raise InvalidRequestError(f"{request.spec_text()}: {err.message}") from None
            raise
        return await self.get(request.name)

    async def _ours(
        self, name: str
    ) -> tuple[ScheduleHandle, ScheduleDescription, Mapping[str, Any]]:
        """The schedule `name`, described, with its memo; not ours or missing: not found."""
        handle = self._client.get_schedule_handle(name)
        try:
            desc = await handle.describe()
        except RPCError as err:
            if err.status is RPCStatusCode.NOT_FOUND:
                raise _not_found(name) from None
            raise
        memo = await desc.memo()
        if memo.get(MEMO_KIND) != KIND_RUNS:
            raise _not_found(name)
        return handle, desc, memo

    async def get(self, name: str) -> ScheduleView:
        _, desc, memo = await self._ours(name)
        recent = [a.scheduled_at for a in desc.info.recent_actions]
        return _view(name, memo, desc.schedule.state, recent, desc.info.next_action_times)

    async def list(self) -> list[ScheduleView]:
        """Every schedule of runs, by name (Temporal's visibility: a moment behind)."""
        out = []
        async for found in await self._client.list_schedules():
            memo = await found.memo()
            if memo.get(MEMO_KIND) != KIND_RUNS or found.schedule is None or found.info is None:
                continue
            recent = [a.scheduled_at for a in found.info.recent_actions]
            state = found.schedule.state
            out.append(_view(found.id, memo, state, recent, found.info.next_action_times))
        return sorted(out, key=lambda v: v.name)

    async def pause(self, name: str, *, by: str) -> None:
        handle, _, _ = await self._ours(name)
        await handle.pause(note=f"paused by {by}")

    async def resume(self, name: str, *, by: str) -> None:
        handle, _, _ = await self._ours(name)
        await handle.unpause(note=f"resumed by {by}")

    async def trigger(self, name: str) -> None:
        """One fire now, under the schedule's overlap policy."""
        handle, _, _ = await self._ours(name)
        await handle.trigger()

    async def backfill(self, name: str, start: datetime, end: datetime) -> None:
        """The fires the spec had between `start` and `end`, as if they had happened."""
        if end <= start:
            raise InvalidRequestError("a backfill's end must come after its start")
        handle, _, memo = await self._ours(name)
        overlap = overlap_policy(str(memo.get(MEMO_OVERLAP, "skip")))
        await handle.backfill(ScheduleBackfill(start_at=start, end_at=end, overlap=overlap))

    async def delete(self, name: str) -> None:
        """The schedule goes; its runs (and a fire still waiting on one) go on."""
        handle, _, _ = await self._ours(name)
        await handle.delete()


def _view(
    name: str,
    memo: Mapping[str, Any],
    state: Any,
    recent: Sequence[datetime],
    next_fires: Sequence[datetime],
) -> ScheduleView:
    return ScheduleView(
        name=name,
        profile=str(memo.get(MEMO_PROFILE, "")),
        spec=str(memo.get(MEMO_SPEC, "")),
        overlap=str(memo.get(MEMO_OVERLAP, "skip")),
        paused=bool(state.paused),
        created_by=str(memo.get(MEMO_CREATED_BY, "")),
        note=state.note or None,
        next_fires=[t.astimezone(UTC) for t in next_fires[:3]],
        recent_runs=[fire_run_id(name, t) for t in recent[-RECENT_SHOWN:]],
    )
