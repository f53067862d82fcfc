"""The bounded thread pool where the async activities' blocking store calls go
(activities._common.db), instead of asyncio's default executor: the worker's store pool,
as many threads as the store keeps connections (workers/compose.py), never more than the
worker runs activities. More threads than connections measured worse on PostgreSQL: a
burst opened and closed overflow connections, a backend each (bench/HISTORY.md set 8)."""

from concurrent.futures import Executor
from contextlib import AbstractContextManager

from temporalio.worker import ExecuteActivityInput

from agentrt.activities._common import blocking_pool
from agentrt.workers.around import AroundActivities
from agentrt.workers.compose import WorkerResources


class BlockingPool(AroundActivities):
    """Every activity the worker runs makes its blocking calls on `pool`."""

    def __init__(self, pool: Executor) -> None:
        self._pool = pool

    def around(self, input: ExecuteActivityInput) -> AbstractContextManager[None]:
        return blocking_pool(self._pool)


def pool(resources: WorkerResources) -> Executor:
    """The resources' store pool (build() always makes one)."""
    assert resources.store_executor is not None
    return resources.store_executor
