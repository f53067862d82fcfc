"""What the native providers (Anthropic Messages, Gemini) share: names on the wire, the
system text, and the typed errors for what their SDKs raise or their replies say.

Both SDKs are built with their retries off, so each call is one attempt and Temporal's
retry policy owns the retries, exactly as for the OpenAI-compatible provider.
"""

from temporalio.exceptions import ApplicationError

from agentrt.activities.providers._wire_names import WireNames
from agentrt.contracts.errors import ErrorType
from agentrt.contracts.messages import ProviderRequest

DEFAULT_MAX_TOKENS = 4096  # Anthropic requires a cap on the answer
DEFAULT_TIMEOUT_SECONDS = 60.0  # under the model activity's default start-to-close (120 s)


class Names:
    """A request's tool names and call ids on the wire. Ours may hold '.' (MCP tools are
    `server.tool`; the runtime's call ids are `r<round>.<n>`), which both APIs refuse, so
    each goes through a WireNames bijection and every reply maps back."""

    def __init__(self, request: ProviderRequest) -> None:
        seen = [c.name for m in request.messages for c in m.tool_calls]
        self.tools = WireNames([t.name for t in request.tools or []], seen)
        self.calls = WireNames(
            (),
            [c.call_id for m in request.messages for c in m.tool_calls]
            + [m.tool_call_id for m in request.messages if m.tool_call_id],
        )


def system_text(request: ProviderRequest) -> str:
    """The system messages, joined: both APIs take the instructions apart from the turns."""
    return "\n\n".join(m.content for m in request.messages if m.role == "system" and m.content)


def refused(provider: str, why: str) -> ApplicationError:
    """The provider answered but declined (a refusal, a safety block): the same request
    gets the same answer, so it is not retried. `why` is the provider's fixed reason code,
    never the text of the answer."""
    return ApplicationError(
        f"provider {provider} refused the request ({why})",
        type=ErrorType.PROVIDER_REJECTED.value,
        non_retryable=True,
    )


def unreachable(provider: str, exc: BaseException) -> ApplicationError:
    """No answer (refused, reset, timed out): retryable; only the class name is kept, since
    transport messages can quote the URL."""
    return ApplicationError(
        f"{provider} unreachable: {type(exc).__name__}",
        type=ErrorType.PROVIDER_UNAVAILABLE.value,
    )


def bounded(request: ProviderRequest, configured: int | None) -> int | None:
    """The reply bound to send: the request's (a budget's worst case counts on it) or the
    provider's configured one, whichever is lower."""
    if request.max_tokens is None:
        return configured
    return request.max_tokens if configured is None else min(request.max_tokens, configured)
