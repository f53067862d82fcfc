"""The base of the wrappers the worker puts around each registered tool (tracing, metrics):
a wrapper is the tool it wraps in every respect but its call, so its spec, effect, reconcile
probe and any other attribute read through."""

from typing import Any

from agentrt.activities.ports import Tool
from agentrt.contracts.enums import ToolEffect
from agentrt.contracts.messages import ToolSpec


class WrappedTool:
    def __init__(self, inner: Tool) -> None:
        self._inner = inner

    @property
    def spec(self) -> ToolSpec:
        return self._inner.spec

    @property
    def effect(self) -> ToolEffect:
        return self._inner.effect

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
