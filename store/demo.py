"""The demo world the shipped tools act on: records (read / set) and a ledger (append)."""

import json
from typing import Any, Protocol

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from agentrt.store.db.context import utcnow
from agentrt.store.db.tables import DemoLedgerRow, DemoRecordRow


class Database(Protocol):
    """Sessions on a database: a toolbox's ToolboxContext, or the store's context in tests."""

    @property
    def sessions(self) -> sessionmaker[Session]: ...

    def reads(self) -> Session: ...


class DemoWorld:
    def __init__(self, ctx: Database) -> None:
        self._ctx = ctx

    def lookup(self, key: str) -> Any | None:
        with self._ctx.reads() as s:
            raw = s.scalar(select(DemoRecordRow.value).where(DemoRecordRow.key == key))
        return None if raw is None else json.loads(raw)

    def set(self, key: str, value: Any) -> None:
        """Upsert: setting the same key to the same value twice converges."""
        with self._ctx.sessions.begin() as s:
            row = s.get(DemoRecordRow, key)
            if row is None:
                s.add(DemoRecordRow(key=key, value=json.dumps(value), updated_at=utcnow()))
            else:
                row.value = json.dumps(value)
                row.updated_at = utcnow()

    def append_ledger(
        self, *, run_id: str, call_id: str, account: str, amount_cents: int, memo: str
    ) -> int:
        """Append a ledger row. Not idempotent on purpose: running it twice adds two rows."""
        with self._ctx.sessions.begin() as s:
            row = DemoLedgerRow(
                run_id=run_id,
                call_id=call_id,
                account=account,
                amount_cents=amount_cents,
                memo=memo,
                created_at=utcnow(),
            )
            s.add(row)
            s.flush()
            return row.id

    def ledger_count(self, run_id: str | None = None, call_id: str | None = None) -> int:
        q = select(func.count()).select_from(DemoLedgerRow)
        if run_id is not None:
            q = q.where(DemoLedgerRow.run_id == run_id)
        if call_id is not None:
            q = q.where(DemoLedgerRow.call_id == call_id)
        with self._ctx.sessions() as s:
            return int(s.scalar(q) or 0)
