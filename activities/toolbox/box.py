"""A toolbox: a named group of tools a profile can name as a whole.

Either a fixed list (`Toolbox("billing", [refund, lookup])`) or a factory that receives what
the worker gives a tool author (`Toolbox("demo", factory=lambda ctx: [...])`, a
ToolboxContext), for tools that need the worker's settings, its tool pool or a table of
their own in its database. The worker loads toolboxes from `AGENTRT_TOOLBOXES`, the
`agentrt.toolboxes` entry-point group and its builder's `toolboxes=` argument.
"""

import re
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field

from sqlalchemy.orm import Session, sessionmaker

from agentrt.activities.ports import Tool
from agentrt.activities.toolbox.decorator import FunctionTool
from agentrt.contracts.errors import ConfigError
from agentrt.contracts.held import EntryKind
from agentrt.core.settings import Settings

NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")


@dataclass(frozen=True)
class ToolboxContext:
    """What a toolbox factory gets: the worker's settings (to read), the pool its sync
    tools run on, and sessions on the worker's database for tools that keep a table of
    their own there (the demo's records and ledger). Not the runtime's store: its runs,
    fence and sealing are no tool's business."""

    settings: Settings
    executor: Executor
    sessions: sessionmaker[Session]  # a write transaction: `with ctx.sessions.begin() as s:`
    read_sessions: sessionmaker[Session]

    def reads(self) -> Session:
        """A session for reads only (on SQLite it takes no write lock)."""
        return self.read_sessions()


@dataclass(frozen=True)
class Toolbox:
    """A named group of tools: a fixed list, a factory called once per worker, or both."""

    name: str
    tools: Sequence[Tool] = ()
    factory: Callable[[ToolboxContext], Iterable[Tool]] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not NAME.match(self.name):
            raise ValueError(f"toolbox name {self.name!r} must match {NAME.pattern}")

    def profile_entry(self) -> tuple[EntryKind, str]:
        """Held by a profile (`Profile(tools=[box])`): every tool of it, by its name."""
        return "toolbox", self.name

    def build(self, ctx: ToolboxContext) -> list[Tool]:
        """The toolbox's tools for one worker; `@tool` functions run on its pool."""
        made = list(self.tools)
        if self.factory is not None:
            try:
                made.extend(self.factory(ctx))
            except Exception as exc:
                raise ConfigError(
                    f"toolbox {self.name!r}: its factory failed: {type(exc).__name__}: {exc}"
                ) from exc
        return [t.on_executor(ctx.executor) if isinstance(t, FunctionTool) else t for t in made]
