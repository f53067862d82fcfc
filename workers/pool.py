"""The worker's one bounded thread pool for blocking work: its activity executor (where the
sync activities and sync tools run), also where the async activities' store calls go
(activities._common.db) instead of asyncio's default executor."""

from concurrent.futures import Executor
from typing import Any

from temporalio.worker import (
    ActivityInboundInterceptor,
    ExecuteActivityInput,
    Interceptor,
)

from agentrt.activities._common import blocking_pool
from agentrt.workers.compose import WorkerResources


class BlockingPool(Interceptor):
    """Every activity the worker runs makes its blocking calls on `pool`. Give it the pool
    the Worker has as its `activity_executor`: store work then shares the one bound."""

    def __init__(self, pool: Executor) -> None:
        self._pool = pool

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _OnPool(next, self._pool)


class _OnPool(ActivityInboundInterceptor):
    def __init__(self, next: ActivityInboundInterceptor, pool: Executor) -> None:
        super().__init__(next)
        self._pool = pool

    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        with blocking_pool(self._pool):
            return await super().execute_activity(input)


def pool(resources: WorkerResources) -> Executor:
    """The resources' pool (build() always makes one)."""
    assert resources.executor is not None
    return resources.executor
