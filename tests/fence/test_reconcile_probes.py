"""Probes as tools carry them, without a run: `@tool(reconcile=...)`, the demo refund's
ledger lookup (real database), the spec naming each, and the worker's tracing wrapper."""

import uuid
from typing import Any

import pytest

from agentrt import Reconciled, ToolContext, ToolNotApplied, tool
from agentrt.activities.ports import ToolFailure, probe_of
from agentrt.activities.toolbox.demo import demo_tools
from agentrt.contracts.enums import ToolEffect
from agentrt.contracts.ids import idempotency_key
from agentrt.store.demo import DemoWorld
from agentrt.workers.call_metrics import MeteredTool
from agentrt.workers.compose import WorkerResources
from agentrt.workers.metrics import WorkerMetrics
from agentrt.workers.tracing import TracedTool


def _ctx(run_id: str = "run-1", call_id: str = "c1") -> ToolContext:
    return ToolContext(
        run_id=run_id, call_id=call_id, idempotency_key=idempotency_key(run_id, call_id)
    )


def paid(key: str, arguments: dict[str, Any]) -> Reconciled:
    return Reconciled.applied(f"{key}: {arguments['amount']}") if key else Reconciled.unknown()


async def paid_async(key: str, arguments: dict[str, Any]) -> Reconciled:
    return Reconciled.not_applied()


@pytest.mark.parametrize("probe", [paid, paid_async])
async def test_a_tool_probe_gets_the_key_and_the_arguments_sync_or_async(probe: Any) -> None:
    @tool(reconcile=probe)
    def pay(amount: int) -> str:
        """Pay."""
        return "paid"

    assert pay.effect is ToolEffect.NON_IDEMPOTENT_WRITE
    assert pay.spec.reconcile == probe.__qualname__
    found = probe_of(pay)
    assert found is not None
    answer = await found({"amount": 5}, _ctx())
    expected = Reconciled.applied("run-1/c1: 5") if probe is paid else Reconciled.not_applied()
    assert answer == expected
    traced = TracedTool(pay)  # what the worker registers: the probe goes with the tool
    assert probe_of(traced) is not None and traced.spec.reconcile == probe.__qualname__


def test_a_tool_without_a_probe_has_none_and_a_non_function_is_refused() -> None:
    @tool
    def pay(amount: int) -> str:
        """Pay."""
        return "paid"

    assert probe_of(pay) is None and pay.spec.reconcile is None
    assert "reconcile" not in pay.spec.model_dump()  # never offered to a model
    with pytest.raises(TypeError, match="reconcile must be a function"):
        tool(reconcile="nope", name="pay")(lambda amount: "x")  # type: ignore[arg-type]


async def test_a_probe_that_answers_no_reconciled_is_an_error() -> None:
    def wrong(key: str, arguments: dict[str, Any]) -> str:
        return "applied"

    @tool(reconcile=wrong)
    def pay(amount: int) -> str:
        """Pay."""
        return "paid"

    found = probe_of(pay)
    assert found is not None
    with pytest.raises(TypeError, match="returned a str"):
        await found({"amount": 1}, _ctx())


def test_the_typed_exceptions_are_known_outcomes() -> None:
    assert issubclass(ToolFailure, ToolNotApplied)  # the runtime's own "nothing was sent"
    assert Reconciled.applied("x" * 60_000).result == "x" * 50_000


async def test_the_demo_refund_probe_looks_the_call_up_in_the_ledger(
    parts: WorkerResources,
) -> None:
    world = DemoWorld(parts.ctx)
    refund = next(t for t in demo_tools(world) if t.spec.name == "issue_refund")
    assert refund.spec.reconcile == "IssueRefund.in_ledger"
    assert [t.spec.name for t in demo_tools(world) if probe_of(t) is not None] == ["issue_refund"]
    probe = probe_of(refund)
    assert probe is not None
    run_id = str(uuid.uuid4())
    args = {"order_id": "1042", "amount_cents": 300}
    assert await probe(args, _ctx(run_id, "r2.1")) == Reconciled.not_applied()
    await refund(args, _ctx(run_id, "r2.1"))  # the refund itself: one ledger row
    answer = await probe(args, _ctx(run_id, "r2.1"))
    assert answer.verdict == "applied"
    assert answer.result == "Refund of 300 cents recorded for order 1042 (found in the ledger)."
    assert await probe(args, _ctx(run_id, "r2.2")) == Reconciled.not_applied()  # by call


async def test_the_metered_wrapper_counts_calls_and_probe_verdicts_by_configured_names() -> None:
    """What the worker registers (workers/compose.py): traced, around metered. A call and a
    failing call by result, each probe verdict; labels are the box's and the tool's names."""

    def probe(key: str, arguments: dict[str, Any]) -> Reconciled:
        if arguments["amount"] < 0:
            raise ConnectionError("ledger away")
        return Reconciled.applied("done") if arguments["amount"] else Reconciled.not_applied()

    @tool(reconcile=probe)
    def pay(amount: int) -> str:
        """Pay."""
        if amount > 100:
            raise ValueError("too much")
        return "paid"

    metrics = WorkerMetrics.create()
    calls = metrics.calls
    wrapped = TracedTool(MeteredTool("billing", pay, calls))
    assert wrapped.spec == pay.spec and wrapped.effect is pay.effect
    assert await wrapped({"amount": 5}, _ctx()) == "paid"
    with pytest.raises(ValueError):
        await wrapped({"amount": 500}, _ctx())
    found = probe_of(wrapped)
    assert found is not None
    assert (await found({"amount": 5}, _ctx())).verdict == "applied"
    assert (await found({"amount": 0}, _ctx())).verdict == "not_applied"
    with pytest.raises(ConnectionError):
        await found({"amount": -1}, _ctx())

    def count(sample: str, **labels: str) -> float | None:
        return metrics.registry.get_sample_value(
            sample, {"toolbox": "billing", "tool": "pay", **labels}
        )

    assert count("agentrt_tool_calls_total", result="ok") == 1
    assert count("agentrt_tool_calls_total", result="error") == 1
    assert count("agentrt_tool_call_seconds_count", result="error") == 1
    for verdict in ("applied", "not_applied", "error"):
        assert count("agentrt_reconcile_probe_calls_total", verdict=verdict) == 1

    @tool  # a tool without a probe stays without one once wrapped
    def note(text: str) -> str:
        """Note."""
        return "ok"

    assert probe_of(TracedTool(MeteredTool("billing", note, calls))) is None
