"""What several revisions write alike: a table's primary key and a cascading foreign key,
each named as the models' naming convention names it (store/db/tables.py); the columns by
their type are in _columns.py.

Frozen: a revision that imports a name from here relies on it to make the schema it made
when it shipped, so a change here changes old revisions (tests/store/test_migration_ddl.py
pins the SQL of each). Add a name rather than change one."""

import sqlalchemy as sa
from alembic import op


def primary_key(table: str, *columns: str) -> sa.PrimaryKeyConstraint:
    """`table`'s primary key on `columns`, named pk_<table>. Frozen (see the module)."""
    return sa.PrimaryKeyConstraint(*columns, name=op.f(f"pk_{table}"))


def cascades_with(table: str, column: str, parent: str) -> sa.ForeignKeyConstraint:
    """`table.column` refers to `parent.id`, and a row goes when its parent row goes: the
    foreign key, named as the models' naming convention names it (store/db/tables.py).
    Frozen (see the module)."""
    return sa.ForeignKeyConstraint(
        [column], [f"{parent}.id"], name=op.f(f"fk_{table}_{column}_{parent}"), ondelete="CASCADE"
    )
