"""What a profile written in Python may hold in `tools` besides names: a tool (a `@tool`
function, or any object with a `spec` that names it), a plain function (the worker makes
it a `@tool`, a non-idempotent write, fail closed), or a tool source that names a whole
toolbox (a `Toolbox`, an `McpServer`, a `RemoteAgent`: each answers `profile_entry()`).

The profile keeps names, which is what its runs and its registration carry; the objects
stay beside it (`Profile.held()`) for the worker that serves it to load. A profile loaded
from YAML holds names only."""

import inspect
from collections.abc import Mapping
from typing import Any, Literal, Protocol, runtime_checkable

EntryKind = Literal["tool", "toolbox"]


@runtime_checkable
class ToolSource(Protocol):
    """An object a profile's `tools` may hold that names a toolbox or a tool."""

    def profile_entry(self) -> tuple[EntryKind, str]: ...


def _named_tool(item: object) -> str | None:
    """The name of a tool object (its `spec.name`), or of a plain function."""
    name = getattr(getattr(item, "spec", None), "name", None)
    if isinstance(name, str) and callable(item):
        return name
    if inspect.isfunction(item):
        return item.__name__
    return None


def split_held(data: Mapping[str, Any]) -> tuple[dict[str, Any], tuple[object, ...]]:
    """`data` with the objects of its `tools` replaced by names (a toolbox's name moves to
    `toolboxes`), and the objects. Anything else in `tools` is a ValueError naming it."""
    tools: list[object] = []
    toolboxes: list[object] = list(data.get("toolboxes") or [])
    held: list[object] = []
    for item in data.get("tools") or []:
        if isinstance(item, str):
            tools.append(item)
            continue
        if isinstance(item, ToolSource):
            kind, name = item.profile_entry()
            (tools if kind == "tool" else toolboxes).append(name)
        elif (named := _named_tool(item)) is not None:
            tools.append(named)
        else:
            raise ValueError(
                f"tools holds {type(item).__name__!r}, which is not a tool name, a @tool "
                "function, a function, a Toolbox, an McpServer or a RemoteAgent"
            )
        held.append(item)
    out = dict(data)
    out["tools"] = tools
    out["toolboxes"] = list(dict.fromkeys(toolboxes))
    return out, tuple(held)


def holds_objects(data: object) -> bool:
    """Whether `data` (a profile's input) has anything but names in `tools`."""
    if not isinstance(data, Mapping):
        return False
    tools = data.get("tools")
    return isinstance(tools, list | tuple) and any(not isinstance(t, str) for t in tools)
