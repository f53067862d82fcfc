"""The shipped demo (workers/demo_rules.yaml + workers/profiles.yaml) end to end through the
real dev server and database: its answers follow what really happened."""

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from sqlalchemy import select
from temporalio.client import Client

from agentrt.contracts.enums import EventKind, RunStatus
from agentrt.core.settings import Settings
from agentrt.starter.facade import AgentRuntime
from agentrt.store.db.tables import DemoLedgerRow
from agentrt.store.demo import DemoWorld
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import WorkerResources, build
from agentrt.workers.main import make_worker
from tests.starter.test_cli import agentrt, cli_env  # noqa: F401

WORKERS = Path(__file__).resolve().parents[2] / "workers"


@pytest.fixture
def demo_parts(settings: Settings) -> Iterator[WorkerResources]:
    built = build(
        settings.replace(
            providers={"rules_file": WORKERS / "demo_rules.yaml"},
            # The demo's approval-free profile is opt-in: its own file.
            worker={"profiles_file": WORKERS / "profiles.autonomous.yaml"},
        )
    )
    yield built
    built.close()


@pytest_asyncio.fixture
async def demo(
    client: Client, demo_parts: WorkerResources, settings: Settings, task_queue: str
) -> AsyncIterator[AgentRuntime]:
    """A worker on the shipped demo config, on the queue `cli_env` points the CLI at."""
    async with make_worker(
        client, demo_parts, settings.replace(temporal={"task_queue": task_queue})
    ):
        yield AgentRuntime(client, RunStore(demo_parts.ctx), task_queue)


def _ledger(parts: WorkerResources, run_id: str) -> list[tuple[str, int]]:
    with parts.ctx.sessions() as s:
        rows = s.execute(
            select(DemoLedgerRow.account, DemoLedgerRow.amount_cents).where(
                DemoLedgerRow.run_id == run_id
            )
        ).all()
    return [(a, n) for a, n in rows]


@pytest.mark.usefixtures("cli_env")
async def test_after_agentrt_deny_the_demo_says_the_refund_was_not_made(
    capsys: pytest.CaptureFixture[str], demo: AgentRuntime, demo_parts: WorkerResources
) -> None:
    waiting = await demo.run("support", "Please refund order 1042", initiator="alice")
    assert waiting.status is RunStatus.WAITING_FOR_APPROVAL
    code, _, err = await agentrt(
        capsys, "deny", waiting.run_id, "--by", "bob", "--reason", "not eligible"
    )
    assert code == 0, err
    done = await demo.result(waiting.run_id)
    assert done.status is RunStatus.COMPLETED
    assert done.answer == (
        "I did not refund order 1042: the refund was not approved "
        "(Denied by bob: not eligible). No refund was made."
    )
    assert _ledger(demo_parts, done.run_id) == []


async def test_please_refund_order_7_refunds_order_7_once(
    demo: AgentRuntime, demo_parts: WorkerResources
) -> None:
    # The seeded demo world has orders 1042 and 1043 only; order 7 is added for this test.
    DemoWorld(demo_parts.ctx).set(
        "order:7",
        {"order_id": "7", "customer": "ACME-3", "total_cents": 777, "status": "delivered"},
    )
    waiting = await demo.run("support", "Please refund order 7", initiator="alice")
    pending = waiting.pending_approval
    assert pending is not None
    assert [(c.name, c.arguments) for c in pending.calls] == [
        ("issue_refund", {"order_id": "7", "amount_cents": 777, "memo": "customer request"})
    ]
    await demo.approve(
        waiting.run_id, approved=True, decided_by="bob", turn_digest=pending.turn_digest
    )
    done = await demo.result(waiting.run_id)
    assert done.status is RunStatus.COMPLETED
    assert _ledger(demo_parts, done.run_id) == [("order:7", 777)]
    assert done.answer is not None and done.answer.startswith("Done: order 7 was refunded.")
    assert "1042" not in done.answer
    looked_up = [
        e.payload["arguments"]
        for e in await demo.events(done.run_id)
        if e.kind is EventKind.TOOL and e.payload.get("tool") == "lookup_order"
    ]
    assert looked_up == [{"order_id": "7"}]


async def test_an_unknown_order_is_reported_as_not_found_without_a_refund(
    demo: AgentRuntime, demo_parts: WorkerResources
) -> None:
    done = await demo.result(
        (await demo.run("support-autonomous", "Please refund order 990001")).run_id
    )
    assert done.status is RunStatus.COMPLETED
    assert done.answer == "I could not find order 990001, so I did not refund anything."
    assert _ledger(demo_parts, done.run_id) == []
    tools = [
        e.payload.get("tool") for e in await demo.events(done.run_id) if e.kind is EventKind.TOOL
    ]
    assert tools == ["lookup_order"]
