"""Event rows: a run's event, its payload filtered to the run's privacy level and sealed,
inserted once however often the activity that writes it runs."""

from typing import Any

from agentrt.contracts.enums import EventKind
from agentrt.store.db.context import dumps, insert_ignoring, utcnow
from agentrt.store.db.sealing import Sealer
from agentrt.store.db.tables import EventRow
from agentrt.store.security.sealed import EVENT_PAYLOAD, within
from agentrt.store.steps.privacy import filter_payload


def event_row(
    sealer: Sealer,
    run_id: str,
    sequence: int,
    kind: EventKind,
    round: int,
    payload: dict[str, Any],
    privacy: str,
    duration_ms: float | None = None,
) -> dict[str, Any]:
    """An event row's columns, its payload filtered to the run's privacy level and sealed."""
    plain = dumps(filter_payload(payload, privacy))
    return {
        "run_id": run_id,
        "sequence": sequence,
        "kind": kind.value,
        "round": round,
        "duration_ms": duration_ms,
        "payload": EVENT_PAYLOAD.seal(sealer, plain, within(run_id, sequence)),
        "created_at": utcnow(),
    }


def insert_event(s: Any, row: dict[str, Any]) -> None:
    """Insert one `event_row`; a retried or replayed activity hits the unique key and adds
    none."""
    s.execute(insert_ignoring(s, EventRow.__table__, ["run_id", "sequence"]), row)
