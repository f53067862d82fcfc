"""`agentrt schedules apply`: the retention Schedule, created or brought up to date (run it
at every deploy; applying twice changes nothing)."""

from datetime import timedelta

from pydantic import ValidationError
from temporalio.client import (
    Client,
    Schedule,
    ScheduleActionStartWorkflow,
    ScheduleAlreadyRunningError,
    ScheduleIntervalSpec,
    ScheduleOverlapPolicy,
    SchedulePolicy,
    ScheduleSpec,
    ScheduleUpdate,
    ScheduleUpdateInput,
)

from agentrt.contracts.errors import ConfigError
from agentrt.contracts.ids import SCHEDULE_RETENTION, WORKFLOW_RETENTION
from agentrt.contracts.retention import RetentionPolicy
from agentrt.core.settings import RetentionSettings, Settings, env_name


def retention_policy(settings: Settings) -> RetentionPolicy:
    """The policy from the settings; a window of 0 (or less) is a ConfigError."""
    for name in ("finished_days", "waiting_days", "every_hours"):
        value = getattr(settings.retention, name)
        if not value > 0:
            variable = env_name(RetentionSettings, name)
            raise ConfigError(f"{variable} must be greater than 0 (got {value})")
    try:
        return RetentionPolicy(
            finished_days=settings.retention.finished_days,
            waiting_days=settings.retention.waiting_days,
        )
    except ValidationError as exc:
        raise ConfigError(f"retention settings: {exc.errors()[0]['msg']}") from None


def retention_schedule(settings: Settings) -> Schedule:
    return Schedule(
        action=ScheduleActionStartWorkflow(
            WORKFLOW_RETENTION,
            retention_policy(settings),
            id=f"{SCHEDULE_RETENTION}-pass",
            task_queue=settings.retention.task_queue,
            static_summary="retention pass",
        ),
        spec=ScheduleSpec(
            intervals=[ScheduleIntervalSpec(every=timedelta(hours=settings.retention.every_hours))]
        ),
        # A pass still running when the next is due: skip the next, never run two at once.
        policy=SchedulePolicy(overlap=ScheduleOverlapPolicy.SKIP),
    )


async def apply(client: Client, settings: Settings, schedule_id: str = SCHEDULE_RETENTION) -> str:
    """Create the schedule, or replace its definition; returns "created" or "updated"."""
    schedule = retention_schedule(settings)
    try:
        await client.create_schedule(schedule_id, schedule)
        return "created"
    except ScheduleAlreadyRunningError:
        pass

    def _replace(_current: ScheduleUpdateInput) -> ScheduleUpdate:
        return ScheduleUpdate(schedule=schedule)

    await client.get_schedule_handle(schedule_id).update(_replace)
    return "updated"
