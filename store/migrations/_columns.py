"""The columns revisions write, by type, NOT NULL unless said `nullable` (as the models'
mapped columns are, store/db/tables.py).

Frozen: a revision that imports a name from here relies on it to make the schema it made
when it shipped, so a change here changes old revisions (tests/store/test_migration_ddl.py
pins the SQL of each). Add a name rather than change one."""

from typing import Any

import sqlalchemy as sa


def string(name: str, length: int, *, nullable: bool = False) -> sa.Column[Any]:
    """A VARCHAR(`length`) column, NOT NULL unless `nullable`. Frozen (see the module)."""
    return sa.Column(name, sa.String(length=length), nullable=nullable)


def text(name: str, *, nullable: bool = False) -> sa.Column[Any]:
    """A TEXT column, NOT NULL unless `nullable`. Frozen (see the module)."""
    return sa.Column(name, sa.Text(), nullable=nullable)


def integer(name: str, *, nullable: bool = False) -> sa.Column[Any]:
    """An INTEGER column, NOT NULL unless `nullable`. Frozen (see the module)."""
    return sa.Column(name, sa.Integer(), nullable=nullable)


def boolean(name: str) -> sa.Column[Any]:
    """A BOOLEAN NOT NULL column. Frozen (see the module)."""
    return sa.Column(name, sa.Boolean(), nullable=False)


def at(name: str, *, nullable: bool = False) -> sa.Column[Any]:
    """A time with its time zone, NOT NULL unless `nullable`. Frozen (see the module)."""
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def serial(name: str = "id") -> sa.Column[Any]:
    """An autoincrementing INTEGER key column. Frozen (see the module)."""
    return sa.Column(name, sa.Integer(), autoincrement=True, nullable=False)


def registration() -> list[sa.Column[Any]]:
    """What a worker's registration says of a profile, in their column order, in both
    tables that held it: agent_profile (0010; 0012 makes it again on the way down) and
    agent_profile_server (0012, after its `worker`). Frozen (see the module)."""
    return [
        string("name", 200),
        string("task_queue", 200, nullable=True),
        string("privacy", 16),
        string("answer_level", 16),
        boolean("writes_unapproved"),
        boolean("publish"),
        text("description"),
        string("digest", 64),
    ]
