"""A model turn as the model activity (activities/model.py) makes it: a provider's reply
as the run's turn and the record to store, or the turn an earlier attempt recorded, read
back from its message and event. No provider is called here."""

from typing import Any

from temporalio import activity

from agentrt.activities._common import db
from agentrt.activities.guardrails import Checked
from agentrt.activities.model_budget import float_or_none, reserved_of
from agentrt.activities.model_output import invalid_answer
from agentrt.contracts.messages import Message, ProviderReply, ToolCall, Usage
from agentrt.contracts.messages import bounded_arguments as bounded
from agentrt.contracts.run import ModelRequest, ModelResult, TurnRecord
from agentrt.store.runs.record import RunStore


async def recorded_turn(runs: RunStore, req: ModelRequest, recorded: Message) -> ModelResult:
    """The turn a previous attempt recorded, from its message and its event."""
    seen = await db(runs.event_payload, req.run_id, req.sequence) or {}
    return ModelResult(
        tool_calls=recorded.tool_calls,
        usage=Usage(
            prompt_tokens=int(seen.get("prompt_tokens", 0)),
            completion_tokens=int(seen.get("completion_tokens", 0)),
            # Absent on calls recorded before costs were: unknown, not 0.
            cost_usd=float_or_none(seen.get("cost_usd")),
        ),
        finish_reason=str(seen.get("finish_reason", "stop")),
        guardrail=str(seen.get("guardrail", "ALLOW")),
        input_required=bool(seen.get("input_required", False)),
        output_invalid=await invalid_answer(req, recorded.content, recorded.tool_calls),
        reserved=reserved_of(seen),
    )


def made_turn(
    req: ModelRequest,
    used: str,
    reply: ProviderReply,
    usage: Usage,
    checked: Checked,
    took: tuple[float, bool],
    answer_level: str,
) -> tuple[ModelResult, TurnRecord]:
    """The provider's reply as this run's turn (our call ids, the output guardrail, the
    cost), and the record of it. `usage`: the reply's, with its cost; `took`: the call's
    duration (ms) and whether the reply fails the output schema."""
    duration_ms, invalid = took
    # Call ids are ours: unique per run and stable, so idempotency keys derive from them.
    calls = [
        ToolCall(call_id=f"r{req.round}.{i}", name=c.name, arguments=bounded(c.arguments))
        for i, c in enumerate(reply.tool_calls if req.offer_tools else [], start=1)
    ]
    message = Message(role="assistant", content=checked.text, tool_calls=calls)
    payload: dict[str, Any] = {
        "content": checked.text,
        "guardrail": checked.verdict.name,
        "input_required": reply.input_required and not calls,
        "tool_calls": [c.model_dump() for c in calls],
        "finish_reason": reply.finish_reason,
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "cost_usd": usage.cost_usd,
        "model": used,
    }
    activity.logger.info("run %s round %d: %d tool call(s)", req.run_id, req.round, len(calls))
    turn = ModelResult(
        tool_calls=calls,
        usage=usage,
        finish_reason=reply.finish_reason,
        guardrail=checked.verdict.name,
        input_required=reply.input_required and not calls,
        output_invalid=invalid,
    )
    record = TurnRecord(
        req.sequence,
        req.round,
        message,
        payload,
        duration_ms,
        req.privacy,
        answer_level,
        pending=tuple(req.pending),
    )
    return turn, record
