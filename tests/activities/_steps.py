"""A running run to call tools in, and a tool call's request: for the tool and write
activities' tests, called outside any workflow."""

from typing import Any

from agentrt.contracts.enums import ToolEffect
from agentrt.contracts.ids import idempotency_key
from agentrt.contracts.messages import ToolCall
from agentrt.contracts.profiles import PrivacyLevel
from agentrt.contracts.run import ToolCallRequest
from agentrt.workers.compose import WorkerResources
from tests._runs import begin_run as begin_stored
from tests._snapshots import recorded


def begin_run(parts: WorkerResources) -> str:
    """A new running run, recorded at `full`."""
    return begin_stored(parts.ctx, profile="auto", snapshot=recorded("full"), prompt="p")


def tool_request(
    run_id: str,
    name: str,
    arguments: dict[str, Any],
    *,
    effect: ToolEffect = ToolEffect.READ_ONLY,
    privacy: PrivacyLevel = "full",
    fence_token: str | None = None,
) -> ToolCallRequest:
    """The request for call r1.1 of `name`, the first of round 1."""
    return ToolCallRequest(
        run_id=run_id,
        round=1,
        sequence=1,
        call=ToolCall(call_id="r1.1", name=name, arguments=arguments),
        effect=effect,
        idempotency_key=idempotency_key(run_id, "r1.1"),
        privacy=privacy,
        fence_token=fence_token,
    )
