"""Tool sources that may be down when the worker starts (MCP servers, remote agents): each
is listed once at start; the ones down are listed again with backoff, and their tools
handed to the worker (`on_up`) once they answer, without a restart. A source that is
`stuck` (its tools clash with another toolbox's, a card that is not the pinned one) is
not listed again."""

import asyncio
import logging
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

from agentrt.activities.ports import Tool
from agentrt.contracts.errors import ConfigError

FIRST_RETRY_SECONDS = 0.5


class SourceState(Protocol):
    tools: list[Tool]
    reason: str | None  # None: up
    stuck: bool


S = TypeVar("S", bound=SourceState)


class LateSources(ABC, Generic[S]):
    """`await open()` lists each once, `retry(on_up)` keeps listing the down ones,
    `close()` ends both."""

    what = "tool source"  # how the logs name one

    def __init__(self, states: dict[str, S], retry_max_seconds: float) -> None:
        self._states = states
        self._retry_max = retry_max_seconds
        self._task: asyncio.Task[None] | None = None
        self._logger = logging.getLogger("agentrt")

    @abstractmethod
    async def _list(self, state: S, *, at_start: bool) -> bool:
        """List `state`'s tools; whether it is up now."""

    @abstractmethod
    async def _close(self, state: S) -> None: ...

    async def open(self) -> "LateSources[S]":
        for state in self._states.values():
            await self._list(state, at_start=True)
        return self

    def boxes(self) -> list[tuple[str, list[Tool]]]:
        """(source, its tools) of each source that is up."""
        return [(n, s.tools) for n, s in self._states.items() if s.reason is None]

    def down(self) -> dict[str, str]:
        """Each source that is down, with why."""
        return {n: s.reason for n, s in self._states.items() if s.reason is not None}

    def status(self) -> dict[str, bool]:
        """Each source: whether it is up."""
        return {n: s.reason is None for n, s in self._states.items()}

    def retry(self, on_up: Callable[[str, list[Tool]], None]) -> None:
        """List each down source again, waiting 0.5 s, then twice as long each time up to
        `retry_max_seconds`; call `on_up(source, tools)` when one answers."""
        if self._task is None and self.down():
            self._task = asyncio.create_task(self._retry(on_up), name=f"{self.what}-retry")

    async def _retry(self, on_up: Callable[[str, list[Tool]], None]) -> None:
        wait = FIRST_RETRY_SECONDS
        while pending := [
            (n, s) for n, s in self._states.items() if s.reason is not None and not s.stuck
        ]:
            await asyncio.sleep(wait)
            wait = min(wait * 2, self._retry_max)
            for name, state in pending:
                if not await self._list(state, at_start=False):
                    continue
                try:
                    on_up(name, state.tools)
                except ConfigError as exc:  # a tool name another toolbox has: never offered
                    state.reason, state.stuck = str(exc), True
                    self._logger.error("%s %s answered, but %s", self.what, name, exc)

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        for state in self._states.values():
            await self._close(state)
