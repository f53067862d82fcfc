"""The facade's methods raise what Temporal says as the runtime's typed errors: a lost
connection is a TemporalUnavailableError, a refusal an AgentRuntimeError
(`core.temporal.call_error`), never the SDK's bare RPCError."""

import functools
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

from temporalio.client import Client
from temporalio.service import RPCError

from agentrt.core.temporal import call_error


class HasClient(Protocol):
    @property
    def client(self) -> Client: ...


S = TypeVar("S", bound=HasClient)
P = ParamSpec("P")
T = TypeVar("T")


def temporal_errors_typed(
    method: Callable[Concatenate[S, P], Coroutine[Any, Any, T]],
) -> Callable[Concatenate[S, P], Coroutine[Any, Any, T]]:
    @functools.wraps(method)
    async def typed(self: S, /, *args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await method(self, *args, **kwargs)
        except RPCError as err:
            raise call_error(err, self.client.service_client.config.target_host) from None

    return typed
