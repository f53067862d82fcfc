"""The baseline loops' activities: trivial, but with the I/O a minimal persistent loop does.

The persistent loop's model activity reads the run's conversation rows and commits the turn
in one transaction; the storeless loop's answers the same script and touches nothing. The
tool activity (both loops) runs the same demo-world operation as the agent's tool
(`lookup_order` reads a record, `issue_refund` appends a ledger row): that I/O is the
tool's, which the agent's tools do too, not the loop's own store. They use the agent's own
engine, so the SQLite pragmas (WAL, BEGIN IMMEDIATE, synchronous=NORMAL) or the PostgreSQL
pool are the same.
"""

import asyncio

from sqlalchemy import Column, Engine, Integer, MetaData, String, Table, Text, func, insert, select
from temporalio import activity

from agentrt.store.db.context import StoreContext
from agentrt.store.demo import DemoWorld
from bench.loop_workflow import (
    ACT_LOOP_MODEL,
    ACT_LOOP_MODEL_STORELESS,
    ACT_LOOP_TOOL,
    READ_TOOL,
    WRITE_TOOL,
    LoopModelIn,
    LoopToolIn,
    LoopTurn,
)

_meta = MetaData()
TURNS = Table(
    "bench_loop_turn",
    _meta,
    Column("run_id", String(64), primary_key=True),
    Column("round", Integer, primary_key=True),
    Column("body", Text, nullable=False),
)


def create_tables(engine: Engine) -> None:
    _meta.create_all(engine)


def padded(text: str, size: int) -> str:
    """`text`, filled out to `size` characters (the long-run section's payload sizes)."""
    return text + "." * (size - len(text)) if size > len(text) else text


def scripted_turn(req: LoopModelIn) -> LoopTurn:
    """The model's script: a read per round, the write in round k, then the answer."""
    if req.round > req.tools:
        return LoopTurn(content=f"Done after {req.tools} tool calls.")
    tool = WRITE_TOOL if req.round == req.tools else READ_TOOL
    return LoopTurn(content=padded("", req.text_bytes), tool=tool)


class LoopActivities:
    def __init__(self, ctx: StoreContext) -> None:
        self._ctx = ctx
        self._world = DemoWorld(ctx)

    def _record(self, run_id: str, round_no: int, body: str) -> int:
        with self._ctx.sessions.begin() as s:
            seen = s.scalar(select(func.count()).where(TURNS.c.run_id == run_id))
            s.execute(insert(TURNS).values(run_id=run_id, round=round_no, body=body))
            return int(seen or 0)

    @activity.defn(name=ACT_LOOP_MODEL)
    async def model(self, req: LoopModelIn) -> LoopTurn:
        turn = scripted_turn(req)
        await asyncio.to_thread(self._record, req.run_id, req.round, turn.content)
        return turn

    @activity.defn(name=ACT_LOOP_MODEL_STORELESS)
    async def model_storeless(self, req: LoopModelIn) -> LoopTurn:
        return scripted_turn(req)

    @activity.defn(name=ACT_LOOP_TOOL)
    async def tool(self, req: LoopToolIn) -> str:
        if req.sleep_ms:
            await asyncio.sleep(req.sleep_ms / 1000)
        if req.tool == WRITE_TOOL:
            row = await asyncio.to_thread(
                self._world.append_ledger,
                run_id=req.run_id,
                call_id=req.call_id,
                account="bench",
                amount_cents=1,
                memo="bench loop",
            )
            return f"refund {row}"
        found = await asyncio.to_thread(self._world.lookup, "order:1042")
        return padded(str(found), req.result_bytes)
