"""agentrt: durable AI agent runs on Temporal, every write at most once.

The public API is what `__all__` lists; every other module is private. Names load on first
use, so importing `agentrt.workflows` inside the workflow sandbox does not drag in the
client, the store or the HTTP stack.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentrt.activities.ports import (
        ModelProvider,
        ToolContext,
        ToolFailedAfterApplying,
        ToolNotApplied,
    )
    from agentrt.activities.toolbox.box import Toolbox, ToolboxContext
    from agentrt.activities.toolbox.decorator import tool
    from agentrt.activities.toolbox.mcp_config import McpServer
    from agentrt.activities.toolbox.remote_config import RemoteAgent, RemoteSkill
    from agentrt.child import run_agent
    from agentrt.contracts.a2a import InputMessage
    from agentrt.contracts.answers import RunAnswer
    from agentrt.contracts.approval import ApprovalDecision
    from agentrt.contracts.budget import BudgetState
    from agentrt.contracts.enums import Outcome, RunStatus, TerminationReason, ToolEffect
    from agentrt.contracts.errors import (
        AgentRuntimeError,
        AlreadyDecidedError,
        ApprovalError,
        ConfigError,
        InputError,
        InvalidRequestError,
        NoWorkerError,
        PayloadKeysRequiredError,
        PromptTooLongError,
        RunIdTakenError,
        RunNotAwaitingApprovalError,
        RunNotBegunError,
        RunNotFoundError,
        SchemaBehindError,
        SelfApprovalError,
        StaleTurnError,
        StoreUnavailableError,
        TemporalUnavailableError,
        UnattestedDecisionError,
        UnknownProfileError,
        WorkersBusyError,
    )
    from agentrt.contracts.messages import ProviderReply, ProviderRequest, Usage
    from agentrt.contracts.profiles import Budget, GuardrailConfig, Profile, Timeouts
    from agentrt.contracts.reconcile import Reconciled
    from agentrt.contracts.reconcile_answer import ReconcileAnswer, WriteResolution
    from agentrt.contracts.run import RunResult
    from agentrt.contracts.start import StartRequest
    from agentrt.core.settings import Settings
    from agentrt.core.temporal import connect
    from agentrt.starter.client import RuntimeClient
    from agentrt.starter.facade import AgentRuntime
    from agentrt.workers.builder import build_worker
    from agentrt.workers.plugin import AgentrtPlugin
    from agentrt.workers.providers import ProviderConfig

_EXPORTS: dict[str, str] = {
    "AgentRuntime": "agentrt.starter.facade",
    "RuntimeClient": "agentrt.starter.client",
    "StartRequest": "agentrt.contracts.start",
    "Settings": "agentrt.core.settings",
    "connect": "agentrt.core.temporal",
    "Outcome": "agentrt.contracts.enums",
    "RunStatus": "agentrt.contracts.enums",
    "TerminationReason": "agentrt.contracts.enums",
    "ToolEffect": "agentrt.contracts.enums",
    "AgentRuntimeError": "agentrt.contracts.errors",
    "AlreadyDecidedError": "agentrt.contracts.errors",
    "ApprovalError": "agentrt.contracts.errors",
    "ConfigError": "agentrt.contracts.errors",
    "InvalidRequestError": "agentrt.contracts.errors",
    "NoWorkerError": "agentrt.contracts.errors",
    "WorkersBusyError": "agentrt.contracts.errors",
    "PayloadKeysRequiredError": "agentrt.contracts.errors",
    "PromptTooLongError": "agentrt.contracts.errors",
    "RunIdTakenError": "agentrt.contracts.errors",
    "RunNotBegunError": "agentrt.contracts.errors",
    "RunNotAwaitingApprovalError": "agentrt.contracts.errors",
    "RunNotFoundError": "agentrt.contracts.errors",
    "SelfApprovalError": "agentrt.contracts.errors",
    "UnattestedDecisionError": "agentrt.contracts.errors",
    "StaleTurnError": "agentrt.contracts.errors",
    "StoreUnavailableError": "agentrt.contracts.errors",
    "TemporalUnavailableError": "agentrt.contracts.errors",
    "UnknownProfileError": "agentrt.contracts.errors",
    "Profile": "agentrt.contracts.profiles",
    "Budget": "agentrt.contracts.profiles",
    "BudgetState": "agentrt.contracts.budget",
    "GuardrailConfig": "agentrt.contracts.profiles",
    "Timeouts": "agentrt.contracts.profiles",
    "tool": "agentrt.activities.toolbox.decorator",
    "ToolContext": "agentrt.activities.ports",
    "ToolNotApplied": "agentrt.activities.ports",
    "ToolFailedAfterApplying": "agentrt.activities.ports",
    "Reconciled": "agentrt.contracts.reconcile",
    # The answers a person gives a run (`RuntimeClient.answer`).
    "RunAnswer": "agentrt.contracts.answers",
    "ApprovalDecision": "agentrt.contracts.approval",
    "InputMessage": "agentrt.contracts.a2a",
    "ReconcileAnswer": "agentrt.contracts.reconcile_answer",
    "WriteResolution": "agentrt.contracts.reconcile_answer",
    "InputError": "agentrt.contracts.errors",
    "Toolbox": "agentrt.activities.toolbox.box",
    "ToolboxContext": "agentrt.activities.toolbox.box",
    "build_worker": "agentrt.workers.builder",
    "AgentrtPlugin": "agentrt.workers.plugin",
    "McpServer": "agentrt.activities.toolbox.mcp_config",
    "RemoteAgent": "agentrt.activities.toolbox.remote_config",
    "RemoteSkill": "agentrt.activities.toolbox.remote_config",
    "SchemaBehindError": "agentrt.contracts.errors",
    "run_agent": "agentrt.child",
    "RunResult": "agentrt.contracts.run",
    "ModelProvider": "agentrt.activities.ports",
    "ProviderRequest": "agentrt.contracts.messages",
    "ProviderReply": "agentrt.contracts.messages",
    "Usage": "agentrt.contracts.messages",
    "ProviderConfig": "agentrt.workers.providers",
}

__all__ = [
    "AgentRuntime",
    "AgentRuntimeError",
    "AgentrtPlugin",
    "AlreadyDecidedError",
    "ApprovalDecision",
    "ApprovalError",
    "Budget",
    "BudgetState",
    "ConfigError",
    "GuardrailConfig",
    "InputError",
    "InputMessage",
    "InvalidRequestError",
    "McpServer",
    "ModelProvider",
    "NoWorkerError",
    "Outcome",
    "PayloadKeysRequiredError",
    "Profile",
    "PromptTooLongError",
    "ProviderConfig",
    "ProviderReply",
    "ProviderRequest",
    "ReconcileAnswer",
    "Reconciled",
    "RemoteAgent",
    "RemoteSkill",
    "RunAnswer",
    "RunIdTakenError",
    "RunNotAwaitingApprovalError",
    "RunNotBegunError",
    "RunNotFoundError",
    "RunResult",
    "RunStatus",
    "RuntimeClient",
    "SchemaBehindError",
    "SelfApprovalError",
    "Settings",
    "StaleTurnError",
    "StartRequest",
    "StoreUnavailableError",
    "TemporalUnavailableError",
    "TerminationReason",
    "Timeouts",
    "ToolContext",
    "ToolEffect",
    "ToolFailedAfterApplying",
    "ToolNotApplied",
    "Toolbox",
    "ToolboxContext",
    "UnattestedDecisionError",
    "UnknownProfileError",
    "Usage",
    "WorkersBusyError",
    "WriteResolution",
    "build_worker",
    "connect",
    "run_agent",
    "tool",
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
