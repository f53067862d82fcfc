"""The baseline's activities: nothing at all, or one trivial committed database write."""

import asyncio

from temporalio import activity

from agentrt.store.db.context import StoreContext
from agentrt.store.demo import DemoWorld
from bench.bare_workflow import ACT_DB_WRITE, ACT_NOOP


class BareActivities:
    def __init__(self, ctx: StoreContext) -> None:
        self._world = DemoWorld(ctx)

    @activity.defn(name=ACT_NOOP)
    async def noop(self, i: int) -> int:
        return i

    @activity.defn(name=ACT_DB_WRITE)
    async def db_write(self, i: int) -> int:
        # Same path as a store call in the agent's activities: a thread, one transaction.
        await asyncio.to_thread(self._world.set, "bench:bare", i)
        return i
