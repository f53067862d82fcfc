"""agentrt: durable AI agent runs on Temporal, every write at most once.

The public API is what `__all__` lists; every other module is private. Names load on first
use, so importing `agentrt.workflows` inside the workflow sandbox does not drag in the
client, the store or the HTTP stack.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentrt.contracts.enums import Outcome, RunStatus, TerminationReason, ToolEffect
    from agentrt.contracts.errors import (
        AgentRuntimeError,
        AlreadyDecidedError,
        ApprovalError,
        ConfigError,
        InvalidRequestError,
        RunNotAwaitingApprovalError,
        RunNotFoundError,
        SelfApprovalError,
        StaleTurnError,
        StoreUnavailableError,
        UnknownProfileError,
    )
    from agentrt.core.settings import Settings
    from agentrt.starter.facade import AgentRuntime
    from agentrt.starter.session import open_runtime

_EXPORTS: dict[str, str] = {
    "AgentRuntime": "agentrt.starter.facade",
    "open_runtime": "agentrt.starter.session",
    "Settings": "agentrt.core.settings",
    "Outcome": "agentrt.contracts.enums",
    "RunStatus": "agentrt.contracts.enums",
    "TerminationReason": "agentrt.contracts.enums",
    "ToolEffect": "agentrt.contracts.enums",
    "AgentRuntimeError": "agentrt.contracts.errors",
    "AlreadyDecidedError": "agentrt.contracts.errors",
    "ApprovalError": "agentrt.contracts.errors",
    "ConfigError": "agentrt.contracts.errors",
    "InvalidRequestError": "agentrt.contracts.errors",
    "RunNotAwaitingApprovalError": "agentrt.contracts.errors",
    "RunNotFoundError": "agentrt.contracts.errors",
    "SelfApprovalError": "agentrt.contracts.errors",
    "StaleTurnError": "agentrt.contracts.errors",
    "StoreUnavailableError": "agentrt.contracts.errors",
    "UnknownProfileError": "agentrt.contracts.errors",
}

__all__ = [
    "AgentRuntime",
    "AgentRuntimeError",
    "AlreadyDecidedError",
    "ApprovalError",
    "ConfigError",
    "InvalidRequestError",
    "Outcome",
    "RunNotAwaitingApprovalError",
    "RunNotFoundError",
    "RunStatus",
    "SelfApprovalError",
    "Settings",
    "StaleTurnError",
    "StoreUnavailableError",
    "TerminationReason",
    "ToolEffect",
    "UnknownProfileError",
    "open_runtime",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'agentrt' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
