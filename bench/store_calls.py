"""CPU per hot store call on PostgreSQL, the engine as built against variants:
`python -m bench.store_calls` (AGENTRT_POSTGRES_DSN, a fresh schema dropped afterwards);
`--sqlite`: on a SQLite file, the store as built against SQLAlchemy's Connection.

A model turn's record (one statement of CTEs, autocommit), a model call's transcript read
(one statement, autocommit) and a start's profile-registry read (one statement), each timed
by the calling thread's CPU clock (user + system), median of five alternating rounds of 400
calls. The variants:

- "autocommit option": the engine before bench/HISTORY.md set 11, autocommit as an
  `isolation_level` execution option, which SQLAlchemy sets on every checkout and resets on
  every checkin (four driver calls, each under the connection's lock, per statement);
  as built, the driver is in autocommit from its connect and a transaction sends its BEGIN
  (store/db/engine.py);
- psycopg's `prepare_threshold` None (never prepare) and 0 (prepare at once), against its
  default 5 (both with autocommit as an option);
- "SQLAlchemy Connection": the engine as built, the statements executed here rather than
  by the store, and the registry read's query built at each call. Sets 16 and 17 ran the
  store's calls on the pooled connection's DB-API cursor (a `driver` module), against this
  variant; set 20 found that gain below the headline bench's noise and the driver was
  removed, so the store's calls go through SQLAlchemy's Connection in every variant now;
- "DB-API cursor" (the transcript read only, both databases): the same statement, compiled
  once, on a pooled connection's DB-API cursor by public APIs (`Engine.raw_connection`):
  how much of a read is SQLAlchemy's execution path (set 26).
"""

import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, select
from sqlalchemy.dialects import sqlite
from sqlalchemy.orm import sessionmaker

from agentrt.contracts.messages import Message
from agentrt.contracts.profiles import Profile
from agentrt.contracts.registered import RegisteredProfile
from agentrt.contracts.run import TurnRecord
from agentrt.contracts.snapshot import RunSnapshot, SnapshotRecord
from agentrt.core.settings import Settings
from agentrt.store.db.context import StoreContext, utcnow
from agentrt.store.db.engine import READ_ONLY_OPTION
from agentrt.store.db.open import open_store
from agentrt.store.db.sealing import Sealer
from agentrt.store.ops.registry import _COLUMNS, ProfileRegistry, ServerRow, _live
from agentrt.store.runs.record import _TURN_INPUTS, RunStore
from agentrt.store.steps.write import Part, one_statement, sqlite_insert
from bench.database import begin_runs, bench_database

ROUNDS, CALLS, RUNS = 5, 400, 20
CONNECTION = "SQLAlchemy Connection"
RAW = "DB-API cursor"


def _variants(url: str, ctx: StoreContext) -> tuple[dict[str, StoreContext], list[Engine]]:
    made: list[Engine] = []
    variants = {"as built": ctx}
    for name, args in (("autocommit option", {}),
                       ("prepare_threshold=None", {"prepare_threshold": None}),
                       ("prepare_threshold=0", {"prepare_threshold": 0})):  # fmt: skip
        engine = create_engine(url, pool_size=10, max_overflow=10, connect_args=args)
        made.append(engine)
        option = engine.execution_options(isolation_level="AUTOCOMMIT")
        variants[name] = replace(
            ctx,
            sessions=sessionmaker(engine),
            read_sessions=sessionmaker(option.execution_options(**{READ_ONLY_OPTION: True})),
            statement_sessions=sessionmaker(option),
        )
    return variants, made


def _cpu_us(call: Callable[[int], Any]) -> float:
    for i in range(60):  # warm: statements built and prepared on the pool's connections
        call(i)
    start = time.thread_time()
    for i in range(60, 60 + CALLS):
        call(i)
    return (time.thread_time() - start) / CALLS * 1e6


def _through(ctx: StoreContext, c: Connection, parts: list[Part]) -> None:
    """A step's statements executed here by SQLAlchemy's Connection (store/steps/write.py
    builds them alike)."""
    if ctx.postgres:
        c.execute(*one_statement(ctx, parts))
        return
    for i, part in enumerate(parts):
        insert = sqlite_insert(part.kind, tuple(sorted(part.params)), returning=i == 0)
        result = c.execute(insert, {f"{part.kind}_{k}": v for k, v in part.params.items()})
        if i == 0:
            result.first()  # the RETURNING row: whether it added its row


def _round(ctx: StoreContext, connection: bool = False) -> tuple[float, float, float]:
    """A round of the three calls; `connection`: the same statements executed here; for the
    registry read, its query built at each call (the profile "p" is registered)."""
    runs = RunStore(ctx)
    ids = begin_runs(runs, RUNS, SnapshotRecord())

    def record(i: int) -> None:
        message = Message(role="assistant", content="x" * 100)
        turn = TurnRecord(1 + i // RUNS, 1, message, {"content": "x"}, 1.0, "full")
        if not connection:
            runs.record_turn(ids[i % RUNS], turn)
            return
        with ctx.one_statement() as c:  # on SQLite, a BEGIN IMMEDIATE transaction
            _through(ctx, c, runs.turn_parts(ids[i % RUNS], turn))

    def read(i: int) -> None:
        if not connection:
            runs.turn_inputs(ids[i % RUNS], 3)
            return
        with ctx.read_rows() as c:
            rows = c.execute(_TURN_INPUTS, {"run_id": ids[i % RUNS], "upto": 3}).all()
        RunSnapshot.parse(rows[0][1])
        [runs.open_body(ids[i % RUNS], seq, body) for seq, body in rows[1:]]

    registry = ProfileRegistry(ctx)

    def lookup(_i: int) -> None:
        if not connection:
            registry.get("p")
            return
        query = (select(*_COLUMNS).where(ServerRow.name == "p", _live(utcnow()))
                 .order_by(ServerRow.registered_at.desc()).limit(1))  # fmt: skip
        with ctx.read_rows() as c:
            row = c.execute(query).mappings().first()
        RegisteredProfile.model_validate(dict(row or {}))

    return _cpu_us(record), _cpu_us(read), _cpu_us(lookup)


def _raw_read(ctx: StoreContext) -> float:
    """The transcript read's statement on a pooled connection's DB-API cursor
    (`Engine.raw_connection`, the statement compiled once with named parameters), the rows
    opened as the store opens them: what SQLAlchemy's execution path costs on top, per read
    (a measure, not a path the store takes: bench/HISTORY.md set 20)."""
    runs = RunStore(ctx)
    ids = begin_runs(runs, RUNS, SnapshotRecord())
    engine = ctx.engine
    dialect = engine.dialect if ctx.postgres else sqlite.dialect(paramstyle="named")
    compiled = _TURN_INPUTS.compile(dialect=dialect)
    sql = str(compiled)

    def read(i: int) -> None:
        params = compiled.construct_params({"run_id": ids[i % RUNS], "upto": 3})
        conn = engine.raw_connection()
        try:
            cursor = conn.cursor()
            cursor.execute(sql, dict(params))
            rows = cursor.fetchall()
            cursor.close()
            conn.commit()  # ends the read's snapshot, as the store's read connection does
        finally:
            conn.close()
        RunSnapshot.parse(rows[0][1])
        [runs.open_body(ids[i % RUNS], seq, body) for seq, body in rows[1:]]

    return _cpu_us(read)


def main() -> None:
    sqlite = "--sqlite" in sys.argv
    dsn = None if sqlite else Settings().database.postgres_dsn
    with tempfile.TemporaryDirectory() as tmp, bench_database(Path(tmp), dsn) as url:
        engine, ctx = open_store(url, Sealer.from_b64(f"bench:{Sealer.new_key_b64()}"))
        # SQLite: the store as built against SQLAlchemy's Connection only (the engine
        # variants are psycopg's).
        variants, made = ({"as built": ctx}, []) if sqlite else _variants(url, ctx)
        try:
            ProfileRegistry(ctx).register([Profile(name="p", instructions="-", model="scripted:p")])
            timed: dict[str, list[tuple[float, float, float]]] = {name: [] for name in variants}
            timed[CONNECTION] = []
            raw: list[float] = []
            for _ in range(ROUNDS):  # alternating, so drift hits every variant alike
                for name, variant in variants.items():
                    timed[name].append(_round(variant))
                timed[CONNECTION].append(_round(ctx, connection=True))
                raw.append(_raw_read(ctx))
            for name, rows in timed.items():
                record = statistics.median(r[0] for r in rows)
                read = statistics.median(r[1] for r in rows)
                lookup = statistics.median(r[2] for r in rows)
                print(f"{name:22s} turn record {record:5.0f} µs CPU, transcript read "
                      f"{read:5.0f} µs, a start's registry read {lookup:5.0f} µs "
                      f"(median of {ROUNDS})")  # fmt: skip
            print(f"{RAW:22s} transcript read {statistics.median(raw):5.0f} µs (median of "
                  f"{ROUNDS})")  # fmt: skip
        finally:
            for e in (*made, engine):
                e.dispose()


if __name__ == "__main__":
    main()
