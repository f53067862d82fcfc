"""SQLite: a step's rows in one statement, through the view `agentrt_step`.

On PostgreSQL a step's rows (the run, a message, an event, the dedup ledger) go as one
statement of data-modifying CTEs (store/steps/write.py). SQLite has no DML in CTEs: each row
was a statement of its own, in a BEGIN IMMEDIATE transaction. Here a step is one INSERT of
one row into a view (or several rows: a completion's turn and its run_completed event),
whose INSTEAD OF trigger inserts each part the row carries (its columns `{kind}_{column}`,
the part's key column not NULL), each ignoring a duplicate key, then the write fence's
clear when the row carries one: one statement, atomic on its own, so it needs no
transaction either.

The trigger's writes run in the order run, message, event, ledger, clear (a run before the
rows that refer to it); an event inserted here fires the event-position trigger (0018) as
any. A part whose columns differ from the view's is written the old way, by the caller.

A later revision that rebuilds one of these tables on SQLite (batch mode's copy and
rename) drops the trigger first and creates it again after, as this one's downgrade and
upgrade do: SQLite checks a trigger's body when a table it names is renamed.
"""

from alembic import op

revision, down_revision = "0021", "0020"
branch_labels = depends_on = None

VIEW = "agentrt_step"
_TRIGGER = "agentrt_step_insert"

# The parts the view carries: kind -> (table, its columns, its unique key). Frozen: the
# columns the store's parts write as of this revision.
_PARTS = {
    "run": ("agent_run", ("id", "profile", "status", "iterations", "truncated",
                          "prompt_tokens", "completion_tokens", "snapshot", "initiator",
                          "created_at", "updated_at", "revision", "parent_run_id"), ("id",)),
    "message": ("agent_message", ("run_id", "sequence", "role", "body"),
                ("run_id", "sequence")),
    "event": ("agent_event", ("run_id", "sequence", "kind", "round", "duration_ms", "payload",
                              "created_at"), ("run_id", "sequence")),
    "ledger": ("tool_result", ("idempotency_key", "run_id", "call_id", "tool", "effect",
                               "is_error", "content", "created_at"), ("idempotency_key",)),
}  # fmt: skip


def _insert(kind: str) -> str:
    table, columns, key = _PARTS[kind]
    values = ", ".join(f"NEW.{kind}_{c}" for c in columns)
    return (
        f"INSERT INTO {table} ({', '.join(columns)}) SELECT {values} "
        f"WHERE NEW.{kind}_{key[0]} IS NOT NULL "
        f"ON CONFLICT ({', '.join(key)}) DO NOTHING;"
    )


# The write fence's clear (activities/fence/_sql._clear): emptied if the token is its own.
_CLEAR = (
    "UPDATE agent_run SET pending_call_id = NULL, pending_tool = NULL, pending_token = NULL, "
    "pending_state = NULL, updated_at = NEW.clear_now "
    "WHERE NEW.clear_run_id IS NOT NULL AND id = NEW.clear_run_id "
    "AND pending_token = NEW.clear_token;"
)


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    names = [f"NULL AS {kind}_{c}" for kind, (_, columns, _) in _PARTS.items() for c in columns]
    names += ["NULL AS clear_run_id", "NULL AS clear_token", "NULL AS clear_now"]
    op.execute(f"CREATE VIEW {VIEW} AS SELECT {', '.join(names)} WHERE 0")
    body = " ".join(_insert(kind) for kind in _PARTS) + " " + _CLEAR
    op.execute(f"CREATE TRIGGER {_TRIGGER} INSTEAD OF INSERT ON {VIEW} BEGIN {body} END")


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    op.execute(f"DROP TRIGGER IF EXISTS {_TRIGGER}")
    op.execute(f"DROP VIEW IF EXISTS {VIEW}")
