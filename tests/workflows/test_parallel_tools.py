"""A turn's calls run as a group (workflows/_group.py), seen from the tools themselves: a
worker in this process, the real Temporal dev server and database, and tools that count
who is inside at once. Reads and idempotent writes overlap up to the profile's limit, the
turn's non-idempotent writes run one after another beside them, results and events stay
in issue order, the history replays, one approval covers the group, a cancel mid-group
lets what started settle and records what it kept from starting, and a call that fails
the run starts no more. SIGKILL inside a group of two writes:
tests/fence/test_fence_kill.py."""

import asyncio
import time
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client
from temporalio.worker import Worker

from agentrt import (
    AgentRuntime,
    RunStatus,
    Settings,
    TerminationReason,
    Timeouts,
    Toolbox,
    ToolContext,
    tool,
)
from agentrt.activities.providers.scripted import RuleSet
from agentrt.contracts.enums import EventKind, ToolEffect
from agentrt.store.runs.record import RunStore
from agentrt.workflows._group import NOT_RUN
from tests._rules import Scripted, new_queue, scripted_profile, scripted_worker
from tests.workflows._replay import assert_replays, fetch, most_scheduled_at_once, patches
from tests.workflows._waiting import CANCEL_REQUESTED, decide, taken_after, until_history

HOLD = 0.4  # seconds each call stays inside its tool


def _calls(*calls: tuple[str, str]) -> list[dict[str, Any]]:
    return [{"name": name, "arguments": {"item": item}} for name, item in calls]


FAN = [("peek", "a"), ("peek", "b"), ("note", "c"), ("send", "d"), ("send", "e")]
RULES = RuleSet.model_validate(
    {
        "default_reply": "I only fan out.",
        "rules": [
            {
                "name": "fan",  # two reads, an idempotent write, two non-idempotent writes
                "match": {"contains": "fan out"},
                "steps": [
                    {"tool_calls": _calls(*FAN)},
                    {"text": "All five done."},
                ],
            },
            {
                "name": "three",
                "match": {"contains": "three reads"},
                "steps": [
                    {"tool_calls": _calls(("peek", "a"), ("peek", "b"), ("peek", "c"))},
                    {"text": "Three peeked."},
                ],
            },
        ],
    }
)


@dataclass
class Probe:
    """The tools' side of the run: who went in, when, and how many at once."""

    gate: asyncio.Event | None = None  # set: calls wait for it instead of HOLD
    inside: int = 0
    most: int = 0
    writes_inside: int = 0
    writes_most: int = 0
    spans: dict[str, tuple[float, float]] = field(default_factory=dict)
    entered: list[str] = field(default_factory=list)

    async def visit(self, item: str, *, write: bool = False) -> str:
        self.entered.append(item)
        self.inside += 1
        self.most = max(self.most, self.inside)
        if write:
            self.writes_inside += 1
            self.writes_most = max(self.writes_most, self.writes_inside)
        start = time.monotonic()
        try:
            if self.gate is not None:
                await self.gate.wait()
            else:
                await asyncio.sleep(HOLD)
        finally:
            self.inside -= 1
            self.writes_inside -= write
            self.spans[item] = (start, time.monotonic())
        return f"{item} done"


def _toolbox(probe: Probe) -> Toolbox:
    @tool(effect=ToolEffect.READ_ONLY)
    async def peek(item: str) -> str:
        """Read an item."""
        return await probe.visit(item)

    @tool(effect=ToolEffect.IDEMPOTENT_WRITE)
    async def note(item: str) -> str:
        """Note an item (idempotent)."""
        return await probe.visit(item)

    @tool  # no effect declared: a non-idempotent write, behind the fence
    async def send(item: str, ctx: ToolContext) -> str:
        """Send an item (not idempotent)."""
        return await probe.visit(item, write=True)

    return Toolbox("probes", [peek, note, send])


def _runtime(
    client: Client, settings: Settings, tmp_path: Path, probe: Probe, limit: int, **more: Any
) -> AbstractAsyncContextManager[Scripted]:
    profile = scripted_profile(
        "fan", "You fan out.", "probes", new_queue(), max_parallel_tools=limit, **more
    )
    return scripted_worker(client, settings, tmp_path, profile, [_toolbox(probe)], RULES)


def _overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def _longest_chain(spans: list[tuple[float, float]]) -> int:
    """The most spans that ran one after another (each starting once the one before had
    ended): how many holds the calls took in a row."""
    spans = sorted(spans)
    longest = [1] * len(spans)
    for j, (start, _) in enumerate(spans):
        for i in range(j):
            if spans[i][1] <= start:
                longest[j] = max(longest[j], longest[i] + 1)
    return max(longest, default=0)


def test_the_longest_chain_counts_calls_in_a_row() -> None:
    assert _longest_chain([(0, 1), (0.5, 1.5), (1, 2), (2, 3)]) == 3  # (0,1), (1,2), (2,3)
    assert _longest_chain([(0, 1), (0, 1), (0, 1)]) == 1
    assert _longest_chain([]) == 0


async def test_reads_and_idempotent_writes_run_at_once_writes_one_after_another(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    probe = Probe()
    async with _runtime(client, settings, tmp_path, probe, limit=4) as (runtime, runs, name, _):
        done = await runtime.run(name, "Please fan out")
        # In issue order (by sequence): the reads commit in the order they finish, which
        # `events()` gives (commit order, what a follow pages by).
        events = sorted(runs.events(done.run_id), key=lambda e: e.sequence)
        transcript = runs.transcript(done.run_id)
    assert done.status is RunStatus.COMPLETED and done.answer == "All five done."
    spans = probe.spans
    # Four slots: the reads, the idempotent write and the first send went in together; the
    # second send waited for the first (one fence per run), never for a read.
    assert probe.most == 4
    assert probe.writes_most == 1
    assert spans["d"][1] <= spans["e"][0]
    assert all(_overlap(spans[x], spans["d"]) for x in "abc")
    # Two holds one after another in all (d, then e), not five: by the calls' order, not
    # by the clock, which a loaded machine stretches.
    assert _longest_chain(list(spans.values())) == 2
    # Results and events in the order the model issued the calls, at consecutive sequences.
    tools = [e for e in events if e.kind is EventKind.TOOL]
    assert [e.payload["call_id"] for e in tools] == [f"r1.{i}" for i in range(1, 6)]
    assert [e.payload["result"] for e in tools] == [f"{x} done" for x in "abcde"]
    seqs = [e.sequence for e in tools]
    assert seqs == list(range(seqs[0], seqs[0] + 5))
    assert sorted(e.position for e in events) == list(range(len(events)))  # each once
    results = [m.content for m in transcript if m.role == "tool"]
    assert results == [f"{x} done" for x in "abcde"]
    history = await fetch(client, done.run_id)
    assert most_scheduled_at_once(history) == 4  # the group's four slots, taken at once
    assert patches(history.events) == []  # a run of this build records no patch marker
    await assert_replays(history)


@pytest.mark.parametrize("limit", [1, 2])
async def test_the_profile_limits_how_many_calls_run_at_once(
    limit: int, client: Client, settings: Settings, tmp_path: Path
) -> None:
    probe = Probe()
    async with _runtime(client, settings, tmp_path, probe, limit=limit) as (runtime, _, name, _):
        done = await runtime.run(name, "three reads please")
    assert done.status is RunStatus.COMPLETED and done.answer == "Three peeked."
    assert probe.most == limit
    assert probe.entered == ["a", "b", "c"]  # slots are taken in issue order
    history = await fetch(client, done.run_id)
    # One at a time is the loop without a group, command for command.
    assert most_scheduled_at_once(history) == limit
    await assert_replays(history)


async def _until(check: Any, what: str) -> None:
    for _ in range(200):
        if check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"never: {what}")


async def test_a_cancel_mid_group_lets_started_calls_settle_and_records_the_rest(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    probe = Probe(gate=asyncio.Event())
    async with _runtime(client, settings, tmp_path, probe, limit=2) as (runtime, runs, name, _):
        run_id = await runtime.start(name, "three reads please")
        await _until(lambda: probe.entered == ["a", "b"], "a and b inside their tools")
        await runtime.cancel(run_id, by="ops", reason="enough")
        # The cancel is in (the workflow has taken it): c must not start, a and b still run.
        await until_history(client, run_id, taken_after(CANCEL_REQUESTED), "the cancel taken")
        assert probe.entered == ["a", "b"]
        assert (await runtime.status(run_id)).status is RunStatus.RUNNING
        probe.gate.set()
        view = await runtime.result(run_id)
        events = runs.events(run_id)
    assert view.status is RunStatus.CANCELLED
    assert probe.entered == ["a", "b"]  # c never ran
    tools = {e.payload["call_id"]: e.payload for e in events if e.kind is EventKind.TOOL}
    assert tools["r1.1"]["result"] == "a done" and not tools["r1.1"]["is_error"]
    assert tools["r1.2"]["result"] == "b done" and not tools["r1.2"]["is_error"]
    assert tools["r1.3"]["result"] == NOT_RUN and tools["r1.3"]["refused"]
    assert events[-1].kind is EventKind.CANCEL and events[-1].payload["by"] == "ops"
    await assert_replays(await fetch(client, run_id))


async def test_one_approval_covers_the_whole_group(
    runtime: AgentRuntime, worker: Worker, runs: RunStore
) -> None:
    """The suite's `support` profile: the turn's four calls wait for one decision, then run
    as one group (the read, the idempotent write, the two refunds one after another)."""
    waiting = await runtime.run("support", "Please make parallel refunds")
    assert waiting.pending_approval is not None
    assert [c.call_id for c in waiting.pending_approval.calls] == [f"r1.{i}" for i in range(1, 5)]
    await decide(runtime, waiting, approved=True)
    done = await runtime.result(waiting.run_id)
    assert done.status is RunStatus.COMPLETED
    assert done.answer == "Looked up, noted and refunded both."
    issued = sorted(runs.events(done.run_id), key=lambda e: e.sequence)
    kinds = [(e.kind, e.payload.get("call_id")) for e in issued]
    approvals = [k for k, _ in kinds if k in (EventKind.APPROVAL_REQUESTED, EventKind.APPROVAL)]
    assert approvals == [EventKind.APPROVAL_REQUESTED, EventKind.APPROVAL]
    after = kinds[kinds.index((EventKind.APPROVAL, None)) :]
    assert [c for k, c in after if k is EventKind.TOOL] == [f"r1.{i}" for i in range(1, 5)]


@pytest.mark.timeout(120)
async def test_a_call_that_fails_the_run_lets_the_running_settle_and_starts_no_more(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    """a and b never answer: each times out on all five attempts (tool_seconds 1), which
    fails the run; c, waiting for a slot, never starts."""
    probe = Probe(gate=asyncio.Event())  # never set
    timeouts = Timeouts(tool_seconds=1)
    async with _runtime(client, settings, tmp_path, probe, 2, timeouts=timeouts) as (
        runtime, runs, name, _,
    ):  # fmt: skip
        view = await runtime.run(name, "three reads please")
        events = runs.events(view.run_id)
    assert view.status is RunStatus.FAILED
    assert view.termination_reason is TerminationReason.TOOL_FAILED
    assert set(probe.entered) == {"a", "b"}  # each attempt of a and b; c never
    assert [e for e in events if e.kind is EventKind.TOOL] == []
    assert events[-1].kind is EventKind.RUN_FAILED
    await assert_replays(await fetch(client, view.run_id))
