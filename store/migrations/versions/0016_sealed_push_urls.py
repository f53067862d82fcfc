"""sealed push URLs: a2a_push_config.url sealed (AES-256-GCM), the rows that exist too

A webhook's URL is as often as not a credential (a secret path, `?token=`); before this
revision it was stored in the clear beside its sealed token and credentials. This revision
seals the URLs already stored, in place, in batches, with the installation's seal key, as
0008 did for event payloads (the sealer the store was opened with, else the settings'). The
binding (table, column, `task_id/id`) is written out here as store/security/sealed.py has it today.
"""

from collections.abc import Callable

import sqlalchemy as sa
from alembic import op

from agentrt.store.db.sealing import PREFIX, Sealer

revision, down_revision = "0016", "0015"
branch_labels = depends_on = None

BATCH = 500
_CONFIG = sa.table(
    "a2a_push_config",
    sa.column("task_id", sa.String),
    sa.column("id", sa.String),
    sa.column("url", sa.Text),
)
_SEALED = f"{PREFIX}.%"


def _sealer() -> Sealer:
    config = op.get_context().config
    given = None if config is None else config.attributes.get("sealer")
    if isinstance(given, Sealer):
        return given
    from agentrt.core.settings import Settings

    return Sealer.from_b64(Settings().read_seal_keys())


def _rewrite(which: sa.ColumnElement[bool], change: Callable[[Sealer, str, str], str]) -> None:
    """Rewrite every URL `which` selects, in key order, BATCH rows per statement."""
    bind = op.get_bind()
    sealer: Sealer | None = None
    after = ("", "")
    key = sa.tuple_(_CONFIG.c.task_id, _CONFIG.c.id)
    write = (
        sa.update(_CONFIG)
        .where(_CONFIG.c.task_id == sa.bindparam("b_task"), _CONFIG.c.id == sa.bindparam("b_id"))
        .values(url=sa.bindparam("b_url"))
    )
    while True:
        rows = bind.execute(
            sa.select(_CONFIG.c.task_id, _CONFIG.c.id, _CONFIG.c.url)
            .where(key > sa.tuple_(*after), which)
            .order_by(_CONFIG.c.task_id, _CONFIG.c.id)
            .limit(BATCH)
        ).all()
        if not rows:
            return
        sealer = sealer or _sealer()  # asked for only when a row needs it
        bind.execute(
            write,
            [
                {"b_task": r.task_id, "b_id": r.id,
                 "b_url": change(sealer, r.url, f"{r.task_id}/{r.id}")}
                for r in rows
            ],
        )  # fmt: skip
        after = (rows[-1].task_id, rows[-1].id)


def _seal(sealer: Sealer, plain: str, row: str) -> str:
    return sealer.seal(plain, table="a2a_push_config", column="url", row=row)


def _open(sealer: Sealer, sealed: str, row: str) -> str:
    return sealer.open(sealed, table="a2a_push_config", column="url", row=row)


def upgrade() -> None:
    _rewrite(_CONFIG.c.url.not_like(_SEALED), _seal)


def downgrade() -> None:
    _rewrite(_CONFIG.c.url.like(_SEALED), _open)
