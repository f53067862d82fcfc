"""An interceptor that runs every activity the worker executes inside a context its
subclass opens: the Temporal interceptor plumbing, once, for the timing
(workers/metrics.ActivityTiming) and the store calls' pool (workers/pool.BlockingPool)."""

from abc import ABC, abstractmethod
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from temporalio.worker import ActivityInboundInterceptor, ExecuteActivityInput, Interceptor

Around = Callable[[ExecuteActivityInput], AbstractContextManager[None]]


class AroundActivities(Interceptor, ABC):
    @abstractmethod
    def around(self, input: ExecuteActivityInput) -> AbstractContextManager[None]:
        """The context one activity execution runs in (exited as it returns or raises)."""

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _Around(next, self.around)


class _Around(ActivityInboundInterceptor):
    def __init__(self, next: ActivityInboundInterceptor, around: Around) -> None:
        super().__init__(next)
        self._around = around

    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        with self._around(input):
            return await super().execute_activity(input)
