"""Tool steps: the result message, the `tool` event and the dedup ledger, in one transaction."""

from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, select, update

from agentrt.contracts.enums import EventKind
from agentrt.contracts.messages import Message, ToolCall
from agentrt.store.context import StoreContext, insert_ignoring, utcnow
from agentrt.store.rows import RunRow, ToolResultRow
from agentrt.store.runs import RunStore

# Clears the run's fence in the write's record transaction, if the token is still its own.
_CLEAR = (
    update(RunRow)
    .where(RunRow.id == bindparam("run_id"), RunRow.pending_token == bindparam("token"))
    .values(
        pending_call_id=None,
        pending_tool=None,
        pending_token=None,
        pending_state=None,
        updated_at=bindparam("now"),
    )
    .execution_options(synchronize_session=False)
)


@dataclass(frozen=True)
class StoredResult:
    content: str
    is_error: bool


class ToolStepStore:
    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx

    def result(self, idempotency_key: str) -> StoredResult | None:
        with self._ctx.reads() as s:
            row = s.get(ToolResultRow, idempotency_key)
        if row is None:
            return None
        content = self._ctx.sealer.open(
            row.content, table="tool_result", column="content", row=idempotency_key
        )
        return StoredResult(content=content, is_error=row.is_error)

    def _ledger(
        self,
        s: Any,
        key: str,
        run_id: str,
        call: ToolCall,
        effect: str,
        content: str,
        is_error: bool,
    ) -> None:
        s.execute(
            insert_ignoring(s, ToolResultRow.__table__, ["idempotency_key"]),
            {
                "idempotency_key": key,
                "run_id": run_id,
                "call_id": call.call_id,
                "tool": call.name,
                "effect": effect,
                "is_error": is_error,
                "content": self._ctx.sealer.seal(
                    content, table="tool_result", column="content", row=key
                ),
                "created_at": utcnow(),
            },
        )

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
        with self._ctx.sessions.begin() as s:
            if idempotency_key is not None:
                self._ledger(s, idempotency_key, run_id, call, effect, content, is_error)
            RunStore(self._ctx).append_message(s, run_id, sequence, message)
            RunStore.add_event(
                s, run_id, sequence, EventKind.TOOL, round, payload, privacy, duration_ms
            )
            if fence_token is not None:
                self._ctx.faults("record.before_clear")
                s.execute(_CLEAR, {"run_id": run_id, "token": fence_token, "now": utcnow()})

    def recorded_result_for(self, run_id: str, call_id: str) -> StoredResult | None:
        with self._ctx.sessions() as s:
            key = s.scalar(
                select(ToolResultRow.idempotency_key).where(
                    ToolResultRow.run_id == run_id, ToolResultRow.call_id == call_id
                )
            )
        return None if key is None else self.result(key)
