"""agent_event.position: a run's events in the order they were committed.

An event's `sequence` is reserved by the workflow before the event is written, so events
commit out of sequence order (parallel tool calls; a reconciled write's `tool` event,
committed minutes after the next model turn's). A follower that read "sequence > last"
skipped such an event. `position` is given to each row as its transaction commits, under a
per-run lock held to the commit, so no event can become visible with a position below one
a follower has already read: followers page by it.

- PostgreSQL: a DEFERRABLE INITIALLY DEFERRED constraint trigger, so it runs at COMMIT,
  after every other statement of the transaction: its lock (a transaction-scoped advisory
  lock on the run) is the last one the transaction takes, and no transaction holding it
  waits for anything else, so it cannot be part of a deadlock. Its UPDATE reads MAX with a
  snapshot taken after the lock, so it sees the previous holder's committed position.
- SQLite: one writer at a time (BEGIN IMMEDIATE), so an AFTER INSERT trigger is in commit
  order already.

An ignored duplicate (a retried activity's ON CONFLICT DO NOTHING) inserts no row, fires
no trigger and takes no position. Existing rows get position = sequence (the order their
followers already read them in); a resume point handed out before is a valid one still.
"""

from alembic import op

from agentrt.store.migrations._columns import integer

revision, down_revision = "0018", "0017"
branch_labels = depends_on = None

_NAME = "agentrt_event_position"
_INDEX = "uq_agent_event_run_position"
# The advisory lock's first key: a class of its own (two-key locks never meet the one-key
# lock the migrations take, store/db/migrate.py).
_LOCK_CLASS = 40_018
_NEXT = "(SELECT COALESCE(MAX(e.position), -1) + 1 FROM agent_event e WHERE e.run_id = NEW.run_id)"


# PostgreSQL: the run's rows without a position are this transaction's own (another's are
# not visible before they commit, and have one once they do): all of them are numbered at
# the first firing, in sequence order, and the later firings find nothing left. A turn's
# `llm` event and the `run_completed` event written in one statement (data-modifying CTEs,
# in no set order) so read in the order of their sequences.
_ALL_OF_THIS_TRANSACTION = (
    "WITH base AS (SELECT COALESCE(MAX(position), -1) AS p FROM agent_event "
    "WHERE run_id = NEW.run_id), "
    "todo AS (SELECT id, row_number() OVER (ORDER BY sequence) AS n FROM agent_event "
    "WHERE run_id = NEW.run_id AND position IS NULL) "
    "UPDATE agent_event e SET position = base.p + todo.n FROM base, todo WHERE e.id = todo.id;"
)


def upgrade() -> None:
    op.add_column("agent_event", integer("position", nullable=True))
    op.execute("UPDATE agent_event SET position = sequence")
    op.create_index(_INDEX, "agent_event", ["run_id", "position"], unique=True)
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            f"CREATE FUNCTION {_NAME}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            f"PERFORM pg_advisory_xact_lock({_LOCK_CLASS}, hashtext(NEW.run_id)); "
            f"{_ALL_OF_THIS_TRANSACTION} RETURN NULL; END $$"
        )
        op.execute(
            f"CREATE CONSTRAINT TRIGGER {_NAME} AFTER INSERT ON agent_event "
            "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW "
            f"WHEN (NEW.position IS NULL) EXECUTE FUNCTION {_NAME}()"
        )
    else:
        op.execute(
            f"CREATE TRIGGER {_NAME} AFTER INSERT ON agent_event FOR EACH ROW "
            f"WHEN NEW.position IS NULL BEGIN "
            f"UPDATE agent_event SET position = {_NEXT} WHERE id = NEW.id; END"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"DROP TRIGGER IF EXISTS {_NAME} ON agent_event")
        op.execute(f"DROP FUNCTION IF EXISTS {_NAME}()")
    else:
        op.execute(f"DROP TRIGGER IF EXISTS {_NAME}")
    op.drop_index(_INDEX, table_name="agent_event")
    op.drop_column("agent_event", "position")
