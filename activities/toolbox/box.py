"""A toolbox: a named group of tools a profile can name as a whole.

Either a fixed list (`Toolbox("billing", [refund, lookup])`) or a factory that receives what
the worker gives (`Toolbox("demo", factory=lambda deps: [...])`), for tools that need the
worker's store or settings. The worker loads toolboxes from `AGENTRT_TOOLBOXES`, the
`agentrt.toolboxes` entry-point group and its builder's `toolboxes=` argument.
"""

import re
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field

from agentrt.activities.ports import Tool
from agentrt.activities.toolbox.decorator import FunctionTool
from agentrt.contracts.errors import ConfigError
from agentrt.core.settings import Settings
from agentrt.store.context import StoreContext

NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")


@dataclass(frozen=True)
class ToolboxDeps:
    """What a toolbox factory may use: the worker's settings, store and tool thread pool."""

    settings: Settings
    store: StoreContext
    executor: Executor


@dataclass(frozen=True)
class Toolbox:
    name: str
    tools: Sequence[Tool] = ()
    factory: Callable[[ToolboxDeps], Iterable[Tool]] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not NAME.match(self.name):
            raise ValueError(f"toolbox name {self.name!r} must match {NAME.pattern}")

    def build(self, deps: ToolboxDeps) -> list[Tool]:
        """The toolbox's tools for one worker; `@tool` functions run on its pool."""
        made = list(self.tools)
        if self.factory is not None:
            try:
                made.extend(self.factory(deps))
            except Exception as exc:
                raise ConfigError(
                    f"toolbox {self.name!r}: its factory failed: {type(exc).__name__}: {exc}"
                ) from exc
        return [t.on_executor(deps.executor) if isinstance(t, FunctionTool) else t for t in made]
