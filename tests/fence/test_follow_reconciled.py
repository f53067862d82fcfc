"""Issue 40 item 1 in a real run (a worker in this process, the real Temporal dev server and
database): one turn issues a non-idempotent write and two reads as a group. The second read
commits first; the first read is held until a follower has seen it; the write is
interrupted after it applied and reconciled by its probe, its `tool` event committed after
both reads'. A follower attached from the start (`AgentRuntime.follow()`) and one that
resumes from the position it had when the second read's event came both see each event
once, in commit order, and the late ones are really late (a lower sequence after a higher)."""

import asyncio
from pathlib import Path
from typing import Any

from temporalio.client import Client

from agentrt import Reconciled, RunStatus, Settings, Timeouts, Toolbox, ToolContext, tool
from agentrt.activities.providers.scripted import RuleSet
from agentrt.contracts.enums import EventKind, ToolEffect
from agentrt.contracts.views import EventView
from tests._rules import new_queue, scripted_profile, scripted_worker

RULES = RuleSet.model_validate(
    {
        "default_reply": "I only pay and look.",
        "rules": [
            {
                "name": "pay",
                "match": {"contains": "pay"},
                "steps": [
                    {"tool_calls": [
                        {"name": "pay", "arguments": {"invoice": "inv-7"}},
                        {"name": "peek", "arguments": {"item": "a"}},
                        {"name": "peek", "arguments": {"item": "b"}},
                    ]},
                    {"text": "Paid and looked."},
                ],
            }
        ],
    }
)  # fmt: skip


class World:
    """The target system and the tools' gate."""

    def __init__(self) -> None:
        self.applied: dict[str, str] = {}
        self.pay_calls = 0
        self.gate = asyncio.Event()  # `peek a` waits for it

    def toolbox(self) -> Toolbox:
        def probe(key: str, arguments: dict[str, Any]) -> Reconciled:
            done = self.applied.get(key)
            return Reconciled.applied(done) if done is not None else Reconciled.not_applied()

        @tool(reconcile=probe)
        def pay(invoice: str, ctx: ToolContext) -> str:
            """Pay an invoice (not idempotent)."""
            self.pay_calls += 1
            self.applied[ctx.idempotency_key] = f"paid {invoice}"
            raise RuntimeError("connection reset after the payment was sent")

        @tool(effect=ToolEffect.READ_ONLY)
        async def peek(item: str) -> str:
            """Look at an item."""
            if item == "a":
                await self.gate.wait()
            return f"{item} seen"

        return Toolbox("till", [pay, peek])


async def test_followers_of_a_run_with_parallel_calls_and_a_reconciled_write(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    world = World()
    timeouts = Timeouts(write_seconds=5, write_heartbeat_seconds=3)
    profile = scripted_profile("till", "You pay and look.", "till", new_queue(),
                               timeouts=timeouts, max_parallel_tools=3)  # fmt: skip
    async with scripted_worker(client, settings, tmp_path, profile, [world.toolbox()], RULES) as w:
        run_id = await w.runtime.start(w.profile, "Please pay invoice inv-7")
        seen: list[EventView] = []
        resume_at: int | None = None

        async def follow() -> None:
            nonlocal resume_at
            async for item in w.runtime.follow(run_id):
                if not isinstance(item, EventView):
                    continue
                seen.append(item)
                if item.kind is EventKind.TOOL and item.payload["result"] == "b seen":
                    resume_at = item.position
                    world.gate.set()  # `peek a` commits only now, after `peek b`

        await asyncio.wait_for(follow(), 120)
        view = await w.runtime.status(run_id)
        stored = w.runs.events(run_id)
        assert resume_at is not None
        resumed = w.runs.events(run_id, resume_at)
    assert view.status is RunStatus.COMPLETED and view.answer == "Paid and looked."
    assert world.pay_calls == 1  # applied once, reconciled, never repeated
    tools = {e.payload["result"]: e for e in stored if e.kind is EventKind.TOOL}
    assert set(tools) == {"paid inv-7", "a seen", "b seen"}
    assert tools["paid inv-7"].payload["reconciled"] is True
    # Everything once, in commit order: the follower's list is the store's, by position.
    assert [e.position for e in seen] == list(range(len(stored)))
    assert [e.sequence for e in seen] == [e.sequence for e in stored]
    assert sorted(e.sequence for e in seen) == sorted({e.sequence for e in stored})
    # The late ones were late: the write's and `peek a`'s events (lower sequences than
    # `peek b`'s) committed after it, and a follower resuming there gets exactly them on.
    late = [e.sequence for e in resumed if e.kind is EventKind.TOOL]
    assert sorted(late) == sorted([tools["paid inv-7"].sequence, tools["a seen"].sequence])
    assert all(s < tools["b seen"].sequence for s in late)
    assert [e.sequence for e in resumed] == [e.sequence for e in seen[-len(resumed) :]]
