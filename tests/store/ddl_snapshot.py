"""The SQL each migration revision runs, revision by revision from an empty database up to
head and back down to base, as text: what tests/store/test_migration_ddl.py pins against
the snapshots tests/store/ddl/<dialect>.txt (generated data, not code: hence .txt).

Captured from a real upgrade, not from Alembic's offline (`--sql`) mode: offline, a SQLite
batch that rebuilds its table (0011's unique constraint) cannot read the table it rebuilds,
and the revisions that branch on the dialect or rewrite rows (0006, 0008, 0013, 0016, 0018)
ask for a live connection. Reads are left out (reflection, the data revisions' SELECTs):
what stays is every statement that writes, with its parameters. A run of CREATE INDEX
statements is sorted, and so are a CREATE TABLE's constraints: a SQLite batch rebuild
writes them in the order of a set, which differs from one process to the next.

Re-make a snapshot after adding a revision (never after changing a shipped one):
`python -m tests.store.test_migration_ddl` (SQLite), with AGENTRT_TEST_DATABASE=postgres for
PostgreSQL."""

from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import event

from agentrt.store.db.engine import make_engine

SNAPSHOTS = Path(__file__).resolve().parent / "ddl"
_SCRIPTS = Path(__file__).resolve().parents[2] / "store" / "migrations"
_READS = ("SELECT", "PRAGMA", "BEGIN", "SHOW")


def _statement(sql: str, parameters: Any) -> str:
    lines = [line.rstrip() for line in sql.strip().splitlines()]
    if lines[0].startswith("CREATE TABLE"):
        body = [line.removesuffix(",") for line in lines[1:-1]]
        columns = [line for line in body if not line.lstrip().startswith("CONSTRAINT")]
        body = columns + sorted(line for line in body if line not in columns)
        lines = [lines[0], *(f"{line}," for line in body[:-1]), *body[-1:], lines[-1]]
    text = "\n".join(lines)
    return f"{text};" if not parameters else f"{text};\n-- with {parameters!r}"


def revisions_sql(url: str) -> str:
    """Every writing statement of an upgrade from base to head and a downgrade back, one
    revision at a time, each under the step that ran it."""
    config = Config()
    config.set_main_option("script_location", str(_SCRIPTS))
    revisions = [s.revision for s in ScriptDirectory.from_config(config).walk_revisions()]
    engine = make_engine(url)
    out: list[str] = []

    @event.listens_for(engine, "before_cursor_execute")
    def _record(_c: Any, _cur: Any, sql: str, parameters: Any, _ctx: Any, _many: bool) -> None:
        if not sql.lstrip().upper().startswith(_READS):
            out.append(_statement(sql, parameters))

    steps = [(command.upgrade, r, f"upgrade to {r}") for r in reversed(revisions)]
    steps += [(command.downgrade, r, f"downgrade to {r}") for r in [*revisions[1:], "base"]]
    try:
        for action, revision, title in steps:
            out.append(f"-- {title}")
            with engine.begin() as conn:
                config.attributes["connection"] = conn
                action(config, revision)
    finally:
        engine.dispose()
    return "\n\n".join(_indexes_sorted(out)) + "\n"


def _indexes_sorted(statements: list[str]) -> list[str]:
    out: list[str] = []
    run: list[str] = []
    for statement in [*statements, ""]:
        if statement.startswith(("CREATE INDEX", "CREATE UNIQUE INDEX")):
            run.append(statement)
            continue
        out += sorted(run)
        run = []
        out.append(statement)
    return out[:-1]
