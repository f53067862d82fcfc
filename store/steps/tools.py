"""Tool steps: the result message, the `tool` event and the dedup ledger, written as one.

The one place a tool step's rows are built: a read or idempotent write records them alone,
a fenced write adds its fence clear (activities/fence) to the same step."""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, select

from agentrt.contracts.deferred import DeferredStep
from agentrt.contracts.enums import EventKind
from agentrt.contracts.messages import Message, ToolCall
from agentrt.store.db.context import StoreContext, utcnow
from agentrt.store.db.tables import ToolResultRow
from agentrt.store.security.sealed import TOOL_RESULT_CONTENT
from agentrt.store.steps.deferred import deferred_of, record_deferred
from agentrt.store.steps.events import event_row
from agentrt.store.steps.messages import message_row
from agentrt.store.steps.write import Part, write_step

_RESULT = select(ToolResultRow.content, ToolResultRow.is_error).where(
    ToolResultRow.idempotency_key == bindparam("key")
)


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolStep:
    """A tool step to record: the call's result at the run's sequence and round, with its
    effect class, at the run's privacy level; `idempotency_key` adds the dedup ledger row
    (an idempotent or fenced write), `extra` adds keys to the `tool` event's payload."""

    run_id: str
    sequence: int
    round: int
    call: ToolCall
    effect: str
    content: str
    is_error: bool
    privacy: str
    idempotency_key: str | None = None
    duration_ms: float | None = None
    extra: dict[str, Any] | None = None


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

    def record(self, step: "ToolStep", also: Sequence[Part] = ()) -> None:
        """Record a tool step: result message + event (+ ledger row with a key), and `also`
        (a fenced write's fence clear), all or none."""
        write_step(self._ctx, [*self.parts(step), *also])

    def deferred(self, step: "ToolStep") -> DeferredStep:
        """A read's step not written: its rows, sealed as `record` would write them, to ride
        with the run's next write (contracts/deferred.py)."""
        if step.idempotency_key is not None:
            raise ValueError("a step with a dedup ledger row is recorded at once")
        return deferred_of(self.parts(step))

    def record_deferred(self, run_id: str, steps: Sequence[DeferredStep]) -> None:
        """Reads' steps that rode with no model call: written alone, as one write."""
        record_deferred(self._ctx, run_id, steps)

    def parts(self, step: "ToolStep") -> list[Part]:
        """A tool step's rows, for `record` or a caller's own transaction
        (store/steps/write.write_parts)."""
        call = step.call
        message = Message(
            role="tool",
            content=step.content,
            tool_call_id=call.call_id,
            tool_name=call.name,
            is_error=step.is_error,
        )
        payload: dict[str, Any] = {
            "call_id": call.call_id,
            "tool": call.name,
            "effect": step.effect,
            "arguments": call.arguments,
            "result": step.content,
            "is_error": step.is_error,
            **(step.extra or {}),
        }
        sealer = self._ctx.sealer
        parts = [
            Part("message", message_row(sealer, step.run_id, step.sequence, message)),
            Part("event", event_row(sealer, step.run_id, step.sequence, EventKind.TOOL,
                                    step.round, payload, step.privacy, step.duration_ms)),
        ]  # fmt: skip
        key = step.idempotency_key
        if key is not None:
            ledger = self._ledger(key, step.run_id, call, step.effect, step.content, step.is_error)
            parts.append(Part("ledger", ledger))
        return parts
