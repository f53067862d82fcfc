"""A tools/call: a run of the tool's profile, started as the token's principal through the
start of `POST /runs` (api/operator/starts.py `begin`), then watched for a bounded time.

- A retried call names the same run: its id is derived from the principal, the profile and
  the call's idempotency key (`_meta["agentrt/idempotency_key"]`, what agentrt's own MCP
  client sends for a write), else the session and the JSON-RPC request id. The start path
  answers a repeat with the run it started, never a second run.
- The answer: once the run completes within the wait, its answer as text, and a typed
  answer's object as `structuredContent`. A run still working, or waiting for a person
  (approval, an answer on a write), answers its status: the run id, what it waits
  for, where to approve, and `agentrt_run_status` to ask again."""

import uuid
from collections.abc import Mapping
from typing import Any

from mcp.types import CallToolResult, TextContent

from agentrt.api.a2a.ids import printable
from agentrt.api.mcp.errors import refused
from agentrt.api.mcp.tools import STATUS_TOOL
from agentrt.api.operator.auth import Principal
from agentrt.api.operator.starts import begin
from agentrt.api.operator.state import OpsState
from agentrt.api.operator.views import RunOut
from agentrt.contracts.enums import RunStatus
from agentrt.contracts.errors import InvalidRequestError
from agentrt.contracts.start import StartRequest
from agentrt.contracts.views import RunView

IDEMPOTENCY_META_KEY = "agentrt/idempotency_key"
MAX_KEY_CHARS = 200
# A call waits this long for its run to complete or to wait for a person; then it answers
# the run's status (RUNNING) and the client asks again with agentrt_run_status.
CALL_WAIT_SECONDS = 30.0
_RUN_IDS = uuid.UUID("6f1d0a52-8d4e-4c1e-9a53-2b7c0e3d9a41")  # the namespace of derived ids
_WAITS_FOR = {
    RunStatus.WAITING_FOR_APPROVAL: "approval",
    RunStatus.WAITING_FOR_INPUT: "input",
    RunStatus.AWAITING_RECONCILIATION: "an answer on a write whose outcome is unknown",
}
# The scope of the person who moves a waiting run on (api/operator/auth.py).
_WHO_ACTS = {
    RunStatus.WAITING_FOR_APPROVAL: "runs:decide",
    RunStatus.AWAITING_RECONCILIATION: "runs:reconcile",
}


def derived_run_id(who: str, profile: str, key: str) -> uuid.UUID:
    """The run of a call: the same principal, profile and key always name the same run."""
    return uuid.uuid5(_RUN_IDS, "\n".join((who, profile, key)))


def call_key(meta: Mapping[str, Any] | None, session: str | None, request: object) -> str | None:
    """The call's idempotency key: `_meta`'s, else the session's request id (a message
    delivered twice); None: a call no retry can name (a stateless request)."""
    given = (meta or {}).get(IDEMPOTENCY_META_KEY)
    if given is not None:
        if not isinstance(given, str) or not given or len(given) > MAX_KEY_CHARS:
            raise refused(
                "invalid_request",
                f"_meta.{IDEMPOTENCY_META_KEY} must be a string of 1 to {MAX_KEY_CHARS} characters",
            )
        if not printable(given):
            raise refused("invalid_request", f"_meta.{IDEMPOTENCY_META_KEY} has control characters")
        return f"key:{given}"
    if session and request is not None:
        return f"request:{session}:{request}"
    return None


def start_request(
    state: OpsState, who: Principal, profile: str, arguments: Mapping[str, Any], key: str | None
) -> StartRequest:
    """The start, validated as `POST /runs` validates it (its prompt cap, its errors)."""
    unknown = sorted(set(arguments) - {"prompt"})
    if unknown:
        raise refused("unknown_fields", f"unknown argument(s) {unknown}: a tool takes `prompt`")
    prompt = arguments.get("prompt")
    if not isinstance(prompt, str):
        raise refused("invalid_request", "the argument `prompt` (a string) is required")
    runtime = state.require_runtime()
    fields: dict[str, Any] = {"profile": profile, "prompt": prompt}
    if key is not None:
        fields["run_id"] = str(derived_run_id(who.name, profile, key))
    try:
        return StartRequest.checked(runtime.max_prompt_chars, fields)
    except InvalidRequestError as exc:
        raise refused(exc.code, str(exc)) from None


async def start_and_wait(
    state: OpsState, who: Principal, body: StartRequest, *, base_url: str, wait: float, typed: bool
) -> CallToolResult:
    _status, started = await begin(state, who, body)
    view = await state.wait_for(started.run_id, _answered_or_waiting, wait)
    return await result(state, started.run_id, view, base_url, typed=typed)


async def status_of(
    state: OpsState, who: Principal, arguments: Mapping[str, Any], base_url: str
) -> CallToolResult:
    run_id = arguments.get("run_id")
    if not isinstance(run_id, str) or set(arguments) != {"run_id"}:
        raise refused("invalid_request", f"{STATUS_TOOL} takes one argument, `run_id` (a string)")
    try:
        uuid.UUID(run_id)
    except ValueError:
        raise refused("invalid_request", "run_id is not a run id") from None
    # Only the principal's own runs (or every run with runs:read-all): 404 alike otherwise.
    view = await state.visible(run_id, who.visible_to)
    return await result(state, run_id, view, base_url, as_status=True)


def _answered_or_waiting(view: RunView) -> bool:
    return view.status.terminal or view.status in _WAITS_FOR


async def result(
    state: OpsState,
    run_id: str,
    view: RunView | None,
    base_url: str,
    *,
    as_status: bool = False,
    typed: bool = False,
) -> CallToolResult:
    """What a call answers for the run as it stands (shown at its privacy level); with
    `as_status` (agentrt_run_status), an answer's `structuredContent` is the status too,
    and so it is for a `typed` tool whose answer's object is not shown (its level)."""
    if view is None:  # accepted by Temporal, not begun within the wait
        said = {"run_id": run_id, "status": RunStatus.STARTING.value}
        return _status_result(said, f"Run {run_id} is starting. {_ask_again(run_id)}")
    out = await state.out(view)
    said = _status(out, base_url)
    if out.status is RunStatus.COMPLETED:
        return _answer(out, said, as_status=as_status, typed=typed)
    if out.status.terminal:
        why = f" ({out.error_type})" if out.error_type else ""
        text = f"Run {run_id} ended {out.status.value}{why}."
        return CallToolResult(
            content=[TextContent(text=text)], structured_content=said, is_error=True
        )
    text = f"Run {run_id} is {out.status.value}."
    if "waiting_for" in said:
        text += (
            f" It waits for {said['waiting_for']}: a person with the scope "
            f"{_WHO_ACTS.get(out.status, 'runs:decide')} acts on it at {said['approve_at']} "
            f"(or POST {base_url}/runs/{run_id}/answers)."
        )
    return _status_result(said, f"{text} {_ask_again(run_id)}")


def _ask_again(run_id: str) -> str:
    return f'Call {STATUS_TOOL} with {{"run_id": "{run_id}"}} for its answer.'


def _status(out: RunOut, base_url: str) -> dict[str, Any]:
    said: dict[str, Any] = {
        "run_id": out.run_id,
        "status": out.status.value,
        "profile": out.profile,
    }
    if out.status in _WAITS_FOR:
        said["waiting_for"] = _WAITS_FOR[out.status]
        said["approve_at"] = f"{base_url}/ui/#/runs/{out.run_id}"
    if out.error_type:
        said["error_type"] = out.error_type
    return said


def _status_result(said: dict[str, Any], text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(text=text)], structured_content=said)


def _answer(out: RunOut, said: dict[str, Any], *, as_status: bool, typed: bool) -> CallToolResult:
    """The answer as text; a typed answer's object as `structuredContent`."""
    text = out.answer if out.answer is not None else ""
    structured: dict[str, Any] | None = out.output if isinstance(out.output, dict) else None
    if as_status or (typed and structured is None):
        structured = {**said, "answer": out.answer, "output": out.output}
    return CallToolResult(content=[TextContent(text=text)], structured_content=structured)
