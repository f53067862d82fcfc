"""sealed events: every agent_event.payload sealed (AES-256-GCM), the rows that exist too

Before this revision the run's event payloads were plain JSON at privacy `full` and
`redacted`: the prompt, the model's text, tool arguments and results, the answer and
provider error text, beside the same content sealed in agent_message, tool_result and
agent_run.answer. This revision seals the payloads already stored, in place, in batches,
with the installation's seal key: the sealer the store was opened with (store.db.migrate hands
it in), else the one the settings name (AGENTRT_SEAL_KEYS, or the key file under
AGENTRT_DATA_DIR, as `alembic upgrade head` run by hand has it). An empty table needs no key.
The binding (table, column, `run_id/sequence`) is written out here, as store/security/sealed.py
has it today, so this revision keeps sealing what it sealed whatever that file becomes.
"""

from collections.abc import Callable

import sqlalchemy as sa
from alembic import op

from agentrt.store.db.sealing import PREFIX, Sealer

revision, down_revision = "0008", "0007"
branch_labels = depends_on = None

BATCH = 500
_EVENT = sa.table(
    "agent_event",
    sa.column("id", sa.Integer),
    sa.column("run_id", sa.String),
    sa.column("sequence", sa.Integer),
    sa.column("payload", sa.Text),
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
    """Rewrite every payload `which` selects, in id order, BATCH rows per statement."""
    bind = op.get_bind()
    sealer: Sealer | None = None
    last = 0
    write = (
        sa.update(_EVENT)
        .where(_EVENT.c.id == sa.bindparam("b_id"))
        .values(payload=sa.bindparam("b_payload"))
    )
    while True:
        rows = bind.execute(
            sa.select(_EVENT.c.id, _EVENT.c.run_id, _EVENT.c.sequence, _EVENT.c.payload)
            .where(_EVENT.c.id > last, which)
            .order_by(_EVENT.c.id)
            .limit(BATCH)
        ).all()
        if not rows:
            return
        sealer = sealer or _sealer()  # asked for only when a row needs it
        bind.execute(
            write,
            [
                {"b_id": r.id, "b_payload": change(sealer, r.payload, f"{r.run_id}/{r.sequence}")}
                for r in rows
            ],
        )
        last = rows[-1].id


def _seal(sealer: Sealer, plain: str, row: str) -> str:
    return sealer.seal(plain, table="agent_event", column="payload", row=row)


def _open(sealer: Sealer, sealed: str, row: str) -> str:
    return sealer.open(sealed, table="agent_event", column="payload", row=row)


def upgrade() -> None:
    _rewrite(_EVENT.c.payload.not_like(_SEALED), _seal)


def downgrade() -> None:
    _rewrite(_EVENT.c.payload.like(_SEALED), _open)
