"""Every sealed column, named once: what seals and opens its values, and what key rotation
walks (store/security/rotate.py).

A value is sealed with its table, its column and its row's id as the AEAD's associated data,
so it opens only where it was sealed: a value copied to another row, column or table does
not open. Naming each column here, with how its row's id is written, keeps every place that
seals or opens it binding the same three.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentrt.store.db.a2a_tables import A2AEventRow, A2APushConfigRow, A2ATaskRow
from agentrt.store.db.sealing import Sealer
from agentrt.store.db.tables import EventRow, LiveRow, MessageRow, RunRow, ToolResultRow


@dataclass(frozen=True)
class SealedColumn:
    model: Any  # the table's row class
    column: str
    keys: tuple[str, ...]  # its primary-key attributes
    row_of: Callable[[Any], str]  # a row's id as the associated data has it
    # Sealed since this migration: rotation seals a value still in the clear (one written by
    # a worker of the code before it, during a rolling upgrade). Readers never accept one.
    sealed_since: str | None = None

    @property
    def table(self) -> str:
        return str(self.model.__tablename__)

    def seal(self, sealer: Sealer, plain: str, row: str) -> str:
        return sealer.seal(plain, table=self.table, column=self.column, row=row)

    def open(self, sealer: Sealer, sealed: str, row: str) -> str:
        return sealer.open(sealed, table=self.table, column=self.column, row=row)


def within(parent: str, child: object) -> str:
    """The id of a row that belongs to another (a run's message, a task's event)."""
    return f"{parent}/{child}"


RUN_ANSWER = SealedColumn(RunRow, "answer", ("id",), lambda r: r.id)
RUN_OUTPUT = SealedColumn(RunRow, "output", ("id",), lambda r: r.id)
RUN_PENDING_APPROVAL = SealedColumn(RunRow, "pending_approval", ("id",), lambda r: r.id)
MESSAGE_BODY = SealedColumn(MessageRow, "body", ("id",), lambda r: within(r.run_id, r.sequence))
# The whole payload at every privacy level: the level decides what it keeps, the seal that
# a dump or backup reads none of it (kind, round, sequence and timing stay columns).
EVENT_PAYLOAD = SealedColumn(
    EventRow, "payload", ("id",), lambda r: within(r.run_id, r.sequence), sealed_since="0008"
)
LIVE_TEXT = SealedColumn(
    LiveRow, "text", ("id",), lambda r: within(r.run_id, f"{r.sequence}.{r.attempt}.{r.offset}")
)
TOOL_RESULT_CONTENT = SealedColumn(
    ToolResultRow, "content", ("idempotency_key",), lambda r: r.idempotency_key
)
TASK_ARTIFACTS = SealedColumn(A2ATaskRow, "artifacts", ("id",), lambda r: r.id)
TASK_STATUS_MESSAGE = SealedColumn(A2ATaskRow, "status_message", ("id",), lambda r: r.id)
TASK_HISTORY = SealedColumn(A2ATaskRow, "history", ("id",), lambda r: r.id)
TASK_FIRST_MESSAGE_DIGEST = SealedColumn(
    A2ATaskRow, "first_message_digest", ("id",), lambda r: r.id
)
TASK_EVENT_PAYLOAD = SealedColumn(
    A2AEventRow, "payload", ("id",), lambda r: within(r.task_id, r.sequence)
)
PUSH_TOKEN = SealedColumn(
    A2APushConfigRow, "token", ("task_id", "id"), lambda r: within(r.task_id, r.id)
)
PUSH_AUTH_CREDENTIALS = SealedColumn(
    A2APushConfigRow, "auth_credentials", ("task_id", "id"), lambda r: within(r.task_id, r.id)
)
# A webhook's URL is a credential as often as not (a secret path, `?token=`): sealed since
# migration 0016, which sealed the ones stored before.
PUSH_URL = SealedColumn(
    A2APushConfigRow, "url", ("task_id", "id"), lambda r: within(r.task_id, r.id),
    sealed_since="0016",
)  # fmt: skip

COLUMNS = (
    RUN_ANSWER,
    RUN_OUTPUT,
    RUN_PENDING_APPROVAL,
    MESSAGE_BODY,
    EVENT_PAYLOAD,
    LIVE_TEXT,
    TOOL_RESULT_CONTENT,
    TASK_ARTIFACTS,
    TASK_STATUS_MESSAGE,
    TASK_HISTORY,
    TASK_FIRST_MESSAGE_DIGEST,
    TASK_EVENT_PAYLOAD,
    PUSH_TOKEN,
    PUSH_AUTH_CREDENTIALS,
    PUSH_URL,
)
