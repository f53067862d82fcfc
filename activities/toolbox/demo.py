"""Demo tools with real side effects in the database: a read, an idempotent and a
non-idempotent write. Tests count ledger rows to prove a write ran once."""

import asyncio
import json
from typing import Any, TypeVar

from pydantic import BaseModel, Field

from agentrt.activities.ports import ToolContext
from agentrt.activities.toolbox.base import TypedTool
from agentrt.activities.toolbox.box import Toolbox, ToolboxContext
from agentrt.contracts.enums import ToolEffect
from agentrt.contracts.reconcile import Reconciled
from agentrt.store.demo import DemoWorld


class OrderArgs(BaseModel):
    order_id: str = Field(min_length=1, max_length=64)


class SetRecordArgs(BaseModel):
    key: str = Field(min_length=1, max_length=200)
    value: Any


class RefundArgs(BaseModel):
    order_id: str = Field(min_length=1, max_length=64)
    amount_cents: int = Field(gt=0, le=1_000_000)
    memo: str = Field(default="", max_length=500)


A = TypeVar("A", bound=BaseModel)


class _WorldTool(TypedTool[A]):
    """A demo tool on the demo world."""

    def __init__(self, world: DemoWorld) -> None:
        self._world = world


class LookupOrder(_WorldTool[OrderArgs]):
    args_model = OrderArgs
    name = "lookup_order"
    description = "Look up an order by its id."
    declared_effect = ToolEffect.READ_ONLY

    async def run(self, args: OrderArgs, ctx: ToolContext) -> str:
        found = await asyncio.to_thread(self._world.lookup, f"order:{args.order_id}")
        return json.dumps(found) if found is not None else f"No order {args.order_id}."


class SetRecord(_WorldTool[SetRecordArgs]):
    args_model = SetRecordArgs
    name = "set_record"
    description = "Set a key in the records store to a value (idempotent)."
    declared_effect = ToolEffect.IDEMPOTENT_WRITE

    async def run(self, args: SetRecordArgs, ctx: ToolContext) -> str:
        await asyncio.to_thread(self._world.set, args.key, args.value)
        return f"Set {args.key}."


class IssueRefund(_WorldTool[RefundArgs]):
    args_model = RefundArgs
    name = "issue_refund"
    description = "Refund an amount on an order: appends a ledger row (not idempotent)."
    declared_effect = ToolEffect.NON_IDEMPOTENT_WRITE

    def __init__(self, world: DemoWorld) -> None:
        super().__init__(world)
        self.reconcile = self.in_ledger

    async def in_ledger(self, arguments: dict[str, Any], ctx: ToolContext) -> Reconciled:
        """The reconcile probe: the ledger, looked up by the call the idempotency key names
        (its run and call id, the columns a refund's row carries). The ledger is the
        target's committed state, so "no row" is a true "not applied" once the interrupted
        attempt can no longer commit one (the workflow asks only then)."""
        rows = await asyncio.to_thread(
            self._world.ledger_count, run_id=ctx.run_id, call_id=ctx.call_id
        )
        if rows == 0:
            return Reconciled.not_applied()
        order = arguments.get("order_id", "?")
        cents = arguments.get("amount_cents", "?")
        return Reconciled.applied(
            f"Refund of {cents} cents recorded for order {order} (found in the ledger)."
        )

    async def run(self, args: RefundArgs, ctx: ToolContext) -> str:
        row = await asyncio.to_thread(
            self._world.append_ledger,
            run_id=ctx.run_id,
            call_id=ctx.call_id,
            account=f"order:{args.order_id}",
            amount_cents=args.amount_cents,
            memo=args.memo,
        )
        return f"Refund #{row} of {args.amount_cents} cents recorded for order {args.order_id}."


def demo_tools(world: DemoWorld) -> list[TypedTool[Any]]:
    return [LookupOrder(world), SetRecord(world), IssueRefund(world)]


def _demo_factory(ctx: ToolboxContext) -> list[TypedTool[Any]]:
    return demo_tools(DemoWorld(ctx))


# Registered like any user toolbox, through this package's `agentrt.toolboxes` entry point.
toolbox = Toolbox("demo", factory=_demo_factory)
