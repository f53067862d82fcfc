"""A read's step that rides with the run's next write (contracts/deferred.py): its rows as
the tool activity builds them, and as the writer that takes them writes them."""

from collections.abc import Iterable, Sequence

from agentrt.contracts.deferred import DeferredStep
from agentrt.store.db.context import StoreContext
from agentrt.store.steps.write import Part, write_steps


def deferred_of(parts: Sequence[Part]) -> DeferredStep:
    """A read's step, from its rows (ToolStepStore.parts: a message and an event, sealed)."""
    rows = {p.kind: p.params for p in parts}
    if set(rows) != {"message", "event"}:
        raise ValueError("only a step of a message and an event rides with another write")
    message, event = rows["message"], rows["event"]
    return DeferredStep(
        sequence=message["sequence"], role=message["role"], body=message["body"],
        kind=event["kind"], round=event["round"], duration_ms=event["duration_ms"],
        payload=event["payload"], created_at=event["created_at"],
    )  # fmt: skip


def deferred_parts(run_id: str, step: DeferredStep) -> list[Part]:
    """The step's rows again, as `ToolStepStore.parts` built them."""
    message = {"run_id": run_id, "sequence": step.sequence, "role": step.role, "body": step.body}
    event = {
        "run_id": run_id, "sequence": step.sequence, "kind": step.kind, "round": step.round,
        "duration_ms": step.duration_ms, "payload": step.payload, "created_at": step.created_at,
    }  # fmt: skip
    return [Part("message", message), Part("event", event)]


def riding(run_id: str, pending: Iterable[DeferredStep]) -> list[list[Part]]:
    """The pending steps' rows, in sequence order (each written once: a duplicate of a step
    already recorded, by a retried call, adds nothing)."""
    return [deferred_parts(run_id, s) for s in sorted(pending, key=lambda s: s.sequence)]


def record_deferred(ctx: StoreContext, run_id: str, steps: Sequence[DeferredStep]) -> None:
    """The steps alone, as one write (the run left its loop before a model call took them)."""
    if steps:
        write_steps(ctx, riding(run_id, steps))
