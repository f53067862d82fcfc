"""The sealed-column registry: each names a real column, and a value opens only in the
column and the row it was sealed for."""

import pytest

from agentrt.store.db.sealing import Sealer, SealError
from agentrt.store.security.sealed import COLUMNS, MESSAGE_BODY, RUN_ANSWER, within


def test_every_registered_column_exists_in_its_table() -> None:
    for spec in COLUMNS:
        assert spec.column in spec.model.__table__.columns, f"{spec.table}.{spec.column}"
        assert all(k in spec.model.__table__.columns for k in spec.keys), spec.table
    assert len({(s.table, s.column) for s in COLUMNS}) == len(COLUMNS)


def test_a_value_opens_only_in_its_own_column_and_row() -> None:
    sealer = Sealer({"k": b"k" * 32}, "k")
    sealed = MESSAGE_BODY.seal(sealer, "hello", within("run-1", 3))
    assert MESSAGE_BODY.open(sealer, sealed, within("run-1", 3)) == "hello"
    with pytest.raises(SealError):
        MESSAGE_BODY.open(sealer, sealed, within("run-1", 4))  # another row
    with pytest.raises(SealError):
        RUN_ANSWER.open(sealer, sealed, within("run-1", 3))  # another column and table


def test_values_sealed_before_the_registry_still_open() -> None:
    """The associated data is what the call sites wrote by hand before: stored values open."""
    sealer = Sealer({"k": b"k" * 32}, "k")
    written = {  # (table, column) as the stores spelled them
        ("agent_run", "answer"), ("agent_run", "pending_approval"), ("agent_message", "body"),
        ("tool_result", "content"), ("a2a_task", "artifacts"), ("a2a_task", "status_message"),
        ("a2a_task", "history"), ("a2a_event", "payload"), ("a2a_push_config", "token"),
        ("a2a_push_config", "auth_credentials"),
        ("agent_event", "payload"),  # as migration 0008 seals the rows it finds
        ("agent_live", "text"),  # since migration 0013
        ("agent_run", "output"),  # a typed answer's object (0014), sealed from the start
        ("a2a_push_config", "url"),  # as migration 0016 seals the rows it finds
        ("a2a_task", "first_message_digest"),  # since 0017, sealed from the start
    }  # fmt: skip
    assert {(s.table, s.column) for s in COLUMNS} == written
    for spec in COLUMNS:
        old = sealer.seal("v", table=spec.table, column=spec.column, row="run-1/2")
        assert spec.open(sealer, old, within("run-1", 2)) == "v"
