"""Tool steps: the result message, the `tool` event and the dedup ledger, written as one."""

from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, select

from agentrt.contracts.enums import EventKind
from agentrt.contracts.messages import Message, ToolCall
from agentrt.store.context import StoreContext, utcnow
from agentrt.store.rows import ToolResultRow
from agentrt.store.runs import RunStore, event_row
from agentrt.store.sealed import TOOL_RESULT_CONTENT
from agentrt.store.step_rows import CLEAR, Part, write_step

_RESULT = select(ToolResultRow.content, ToolResultRow.is_error).where(
    ToolResultRow.idempotency_key == bindparam("key")
)


@dataclass(frozen=True)
class StoredResult:
    content: str
    is_error: bool


class ToolStepStore:
    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx

    def result(self, idempotency_key: str) -> StoredResult | None:
        # Every idempotent write asks first: a built statement on a connection (context.py).
        with self._ctx.read_rows() as c:
            row = c.execute(_RESULT, {"key": idempotency_key}).first()
        if row is None:
            return None
        content = TOOL_RESULT_CONTENT.open(self._ctx.sealer, row.content, idempotency_key)
        return StoredResult(content=content, is_error=bool(row.is_error))

    def _ledger(
        self, key: str, run_id: str, call: ToolCall, effect: str, content: str, is_error: bool
    ) -> dict[str, Any]:
        return {
            "idempotency_key": key,
            "run_id": run_id,
            "call_id": call.call_id,
            "tool": call.name,
            "effect": effect,
            "is_error": is_error,
            "content": TOOL_RESULT_CONTENT.seal(self._ctx.sealer, content, key),
            "created_at": utcnow(),
        }

    def record(
        self,
        *,
        run_id: str,
        sequence: int,
        round: int,
        call: ToolCall,
        effect: str,
        content: str,
        is_error: bool,
        privacy: str,
        idempotency_key: str | None,
        fence_token: str | None = None,
        duration_ms: float | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        """Record a tool step: result message + event (+ ledger row, + fence clear) atomically.

        With `fence_token`, the fence is cleared in the same transaction and the token must
        still be the run's: a write whose audit step cannot be persisted raises, and the
        caller fails the run (fail closed).
        """
        message = Message(
            role="tool",
            content=content,
            tool_call_id=call.call_id,
            tool_name=call.name,
            is_error=is_error,
        )
        payload: dict[str, Any] = {
            "call_id": call.call_id,
            "tool": call.name,
            "effect": effect,
            "arguments": call.arguments,
            "result": content,
            "is_error": is_error,
            **(extra or {}),
        }
        parts = [
            Part("message", RunStore(self._ctx).message_row(run_id, sequence, message)),
            Part("event", event_row(self._ctx.sealer, run_id, sequence, EventKind.TOOL, round,
                                    payload, privacy, duration_ms)),
        ]  # fmt: skip
        if idempotency_key is not None:
            ledger = self._ledger(idempotency_key, run_id, call, effect, content, is_error)
            parts.append(Part("ledger", ledger))
        if fence_token is not None:
            clear = {"run_id": run_id, "token": fence_token, "now": utcnow()}
            parts.append(Part(CLEAR, clear, fault="record.before_clear"))
        write_step(self._ctx, parts)

    def recorded_result_for(self, run_id: str, call_id: str) -> StoredResult | None:
        with self._ctx.sessions() as s:
            key = s.scalar(
                select(ToolResultRow.idempotency_key).where(
                    ToolResultRow.run_id == run_id, ToolResultRow.call_id == call_id
                )
            )
        return None if key is None else self.result(key)
