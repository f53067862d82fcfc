"""What several revisions write alike. Frozen: a revision that imports a name from here
relies on it to make the schema it made when it shipped, so a change here changes old
revisions. Add a name rather than change one."""

import sqlalchemy as sa
from alembic import op


def cascades_with(table: str, column: str, parent: str) -> sa.ForeignKeyConstraint:
    """`table.column` refers to `parent.id`, and a row goes when its parent row goes: the
    foreign key, named as the models' naming convention names it (store/db/tables.py)."""
    return sa.ForeignKeyConstraint(
        [column], [f"{parent}.id"], name=op.f(f"fk_{table}_{column}_{parent}"), ondelete="CASCADE"
    )
