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

LOOKUP = "What about order 7?"  # the scripted model answers it with a read, no approval


def schedule_name(prefix: str = "s") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


async def fired(
    get: Callable[[str], Awaitable[ScheduleView]], name: str, count: int, within: float = 60
) -> list[str]:
    """The run ids of the schedule's first `count` fires, once it has fired that often."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while True:
        view = await get(name)
        if len(view.recent_runs) >= count:
            return view.recent_runs[:count]
        if loop.time() > deadline:
            raise AssertionError(f"schedule {name} fired {len(view.recent_runs)} of {count}")
        await asyncio.sleep(0.1)


async def run_exists(client: Client, run_id: str, within: float = 60) -> bool:
    """True once the run's workflow exists (a fire is recorded a moment before its run)."""
    async with asyncio.timeout(within):
        while True:
            try:
                await client.get_workflow_handle(run_id).describe()
                return True
            except RPCError as err:
                if err.status is not RPCStatusCode.NOT_FOUND:
                    raise
            await asyncio.sleep(0.1)


async def run_ended(runtime: AgentRuntime, run_id: str, within: float = 60) -> RunView:
    """The run, once it ended."""
    async with asyncio.timeout(within):
        await run_exists(runtime.client, run_id)
        return await runtime.result(run_id)


async def listed(
    list_: Callable[[], Awaitable[list[ScheduleView]]], name: str, within: float = 30
) -> ScheduleView:
    """The schedule as the list shows it, once Temporal's visibility has it."""
    async with asyncio.timeout(within):
        while True:
            for view in await list_():
                if view.name == name:
                    return view
            await asyncio.sleep(0.1)


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
