"""Helpers of the schedule tests: a schedule's name of this test only, and waits on what a
schedule did (its fires, their runs), each a poll with a deadline, never a fixed sleep."""

import asyncio
import uuid
from collections.abc import Awaitable, Callable

from temporalio.client import Client, ScheduleActionExecutionStartWorkflow
from temporalio.service import RPCError, RPCStatusCode

from agentrt.contracts.schedules import ScheduleView
from agentrt.contracts.views import RunView
from agentrt.starter.facade import AgentRuntime
from tests.workflows._waiting import until, until_found, workflow_gone

LOOKUP = "What about order 7?"  # the scripted model answers it with a read, no approval


def schedule_name(prefix: str = "s") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


async def fired(
    get: Callable[[str], Awaitable[ScheduleView]], name: str, count: int, within: float = 60
) -> list[str]:
    """The run ids of the schedule's first `count` fires, once it has fired that often."""

    async def fires() -> list[str] | None:
        runs = (await get(name)).recent_runs
        return runs[:count] if len(runs) >= count else None

    return await until_found(fires, f"{count} fires of schedule {name}", within)


async def run_exists(client: Client, run_id: str, within: float = 60) -> bool:
    """True once the run's workflow exists (a fire is recorded a moment before its run)."""

    async def exists() -> bool:
        return not await workflow_gone(client, run_id)

    await until(exists, f"a workflow {run_id}", within)
    return True


async def run_ended(runtime: AgentRuntime, run_id: str, within: float = 60) -> RunView:
    """The run, once it ended."""
    async with asyncio.timeout(within):
        await run_exists(runtime.client, run_id)
        return await runtime.result(run_id)


async def listed(
    list_: Callable[[], Awaitable[list[ScheduleView]]], name: str, within: float = 30
) -> ScheduleView:
    """The schedule as the list shows it, once Temporal's visibility has it."""

    async def shown() -> ScheduleView | None:
        return next((view for view in await list_() if view.name == name), None)

    return await until_found(shown, f"schedule {name} listed", within)


async def fire_ids(client: Client, name: str) -> list[str]:
    """The workflow ids of the schedule's recent fires, oldest first."""
    desc = await client.get_schedule_handle(name).describe()
    out = []
    for action in desc.info.recent_actions:
        assert isinstance(action.action, ScheduleActionExecutionStartWorkflow)
        out.append(action.action.workflow_id)
    return out


async def absent(client: Client, name: str) -> bool:
    """Whether Temporal holds no schedule `name` (bad input left nothing behind)."""
    try:
        await client.get_schedule_handle(name).describe()
    except RPCError as err:
        return err.status is RPCStatusCode.NOT_FOUND
    return False
