"""What several revisions do alike to the rows already stored: seal a column's values in
place (0008 the event payloads, 0016 the push URLs), or open them again on the way down.

Frozen, as _ddl.py: a revision that imports a name from here relies on it to rewrite the
rows it rewrote when it shipped, so a change here changes old revisions. Add a name rather
than change one. Each revision names its binding (table, column, the row's key) itself, as
store/security/sealed.py has it at that revision, so it keeps sealing what it sealed
whatever that file becomes."""

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

from agentrt.store.db.sealing import PREFIX, Sealer

BATCH = 500  # rows a statement reads or writes
_SEALED = f"{PREFIX}.%"


def _sealer() -> Sealer:
    """The sealer the store was opened with (store.db.migrate hands it in), else the one the
    settings name (AGENTRT_SEAL_KEYS, or the key file under AGENTRT_DATA_DIR, as `alembic
    upgrade head` run by hand has it)."""
    config = op.get_context().config
    given = None if config is None else config.attributes.get("sealer")
    if isinstance(given, Sealer):
        return given
    from agentrt.core.settings import Settings

    return Sealer.from_b64(Settings().read_seal_keys())


def reseal(
    table: str, column: str, *, order: Sequence[str], row: Sequence[str], seal: bool
) -> None:
    """Seal every value of `table.column` not sealed yet (`seal`), or open every sealed one,
    in `order` (the table's unique key), BATCH rows per statement. A value is bound to its
    row by `row`'s columns' values joined with "/" (`run_id/sequence`). An empty table needs
    no key: the sealer is asked for when a row needs it."""
    rows_of = sa.table(table, *(sa.column(name) for name in dict.fromkeys([*order, *row, column])))
    value, key = rows_of.c[column], sa.tuple_(*(rows_of.c[name] for name in order))
    write = (
        sa.update(rows_of)
        .where(*(rows_of.c[name] == sa.bindparam(f"b_{name}") for name in order))
        .values({column: sa.bindparam("b_value")})
    )
    bind, sealer, after = op.get_bind(), None, None

    def rewritten(found: sa.RowMapping) -> dict[str, Any]:
        assert sealer is not None
        change = sealer.seal if seal else sealer.open
        bound = "/".join(str(found[name]) for name in row)
        new = change(found[column], table=table, column=column, row=bound)
        return {**{f"b_{name}": found[name] for name in order}, "b_value": new}

    while True:
        read = sa.select(rows_of).where(value.not_like(_SEALED) if seal else value.like(_SEALED))
        if after is not None:
            read = read.where(key > sa.tuple_(*after))
        rows = bind.execute(read.order_by(*key.clauses).limit(BATCH)).mappings().all()
        if not rows:
            return
        sealer = sealer or _sealer()
        bind.execute(write, [rewritten(found) for found in rows])
        after = tuple(rows[-1][name] for name in order)
