"""`agentrt demo --team`: a team of agents on the demo's dev server. The profile `triage`
delegates a refund to the child agent `support` (a Temporal child workflow, whose refund
waits for an operator's approval in the child's own run) and asks the remote agent
`carrier` (a second agentrt: its own API process, database and worker) for a quote over
A2A. The demo approves each pending turn of the tree as the plain demo does, then prints
the tree, every run's events and the remote's task count."""

import asyncio

from rich.console import Console
from rich.text import Text

from agentrt.contracts.enums import RunStatus
from agentrt.contracts.errors import RunNotFoundError
from agentrt.contracts.profiles import Profile
from agentrt.contracts.views import EventView, RunView
from agentrt.core.profiles import load_profiles
from agentrt.core.settings import Settings
from agentrt.starter import render
from agentrt.starter.facade import AgentRuntime
from agentrt.store.runs.record import RunStore
from agentrt.workers import demo_common as demo
from agentrt.workers._demo_server import connect_when_ready
from agentrt.workers.builder import build_worker
from agentrt.workers.team_remote import TOOL, RemoteSide, offered, remote_side

TEAM_PROFILE = "triage"
TEAM_PROMPT = "Triage: order 1042 came back; refund it and get a return-shipping quote."
POLL_SECONDS = 0.25


def triage_profile(remote: RemoteSide) -> Profile:
    return Profile(
        name=TEAM_PROFILE,
        description="Routes a customer's request to the agents that can act on it.",
        instructions="Route each request: refunds to support, shipping quotes to the carrier.",
        model="scripted:demo",
        agents=["support"],  # a child agent: a tool that runs `support` as a child workflow
        tools=[remote.agent],  # a remote A2A agent: its skills are tools
        approval="writes",  # delegating to `support`, which can refund, is a write
        privacy="full",
        max_iterations=5,
    )


async def team_session(
    settings: Settings,
    opts: demo.DemoOptions,
    ui_port: int,
    out: Console,
    err: Console,
    code: list[int],
) -> None:
    """Against the Temporal at `settings.temporal.address`: the remote agentrt, this
    side's worker (the shipped profiles and `triage`) and one triage run."""
    client = await connect_when_ready(settings)
    await asyncio.to_thread(demo.prepare_data, settings)
    async with remote_side(client, settings, out) as remote:
        # The remote is on loopback: the outbound rules refuse it unless allowed by name.
        here = settings.replace(worker={"remote_agents_allowed_networks": "127.0.0.1/32"})
        served = [*load_profiles(here.worker.profiles_file).values(), triage_profile(remote)]
        worker, resources = build_worker(client, here, profiles=served)
        with resources:
            async with worker:
                await offered(resources, TOOL)
                out.print(
                    f"Worker: polling task queue {here.temporal.task_queue!r} "
                    f"(profiles {', '.join(p.name for p in served)})",
                    markup=False,
                    highlight=False,
                )
                runtime = AgentRuntime(client, RunStore(resources.ctx), here.temporal.task_queue)
                code.append(await _drive(runtime, remote, opts, ui_port, out))
                await demo.hold_if_asked(opts, ui_port, out)
    out.print("Stopped the remote agent; stopping the worker and the dev server…", markup=False)


async def _drive(
    runtime: AgentRuntime, remote: RemoteSide, opts: demo.DemoOptions, ui_port: int, out: Console
) -> int:
    run_id = await runtime.start(TEAM_PROFILE, TEAM_PROMPT, initiator=demo.DEMO_INITIATOR)
    out.print(
        Text(f"Run {run_id} started: profile {TEAM_PROFILE!r}, prompt {TEAM_PROMPT!r}"),
        soft_wrap=True,
    )
    root = await follow_tree(runtime, run_id, opts.interactive, out)
    tree = [root, *[await runtime.status(c) for c in await tree_ids(runtime, root)]]
    out.print("Tree:", style="bold")
    for view in tree:
        depth = 0 if view.run_id == root.run_id else 1
        out.print(Text(f"{'  ' * depth}{view.profile} {view.run_id} {view.status.value}"))
    for view in tree:
        out.print(f"Events of {view.profile} ({view.run_id}):", style="bold", highlight=False)
        render.print_events(out, await runtime.events(view.run_id))
    refunds = sum([_refunds(await runtime.events(v.run_id)) for v in tree])
    out.print(f"Refunds issued: {refunds}", markup=False, highlight=False)
    out.print(
        f"Remote agent {remote.agent.name!r}: {remote.tasks()} A2A task(s) from this caller",
        markup=False,
        highlight=False,
    )
    render.print_outcome(out, root)
    out.print(f"Temporal Web: {demo.web_url(ui_port, run_id)}", markup=False, highlight=False)
    return 0 if root.status is RunStatus.COMPLETED else 1


def _refunds(events: list[EventView]) -> int:
    return sum(
        1
        for e in events
        if e.kind.value == "tool"
        and e.payload.get("tool") == "issue_refund"
        and not e.payload.get("is_error")
    )


async def tree_ids(runtime: AgentRuntime, root: RunView) -> list[str]:
    """Every descendant of `root`, parents before their children."""
    found: list[str] = []
    todo = list(root.children)
    while todo:
        run_id = todo.pop(0)
        found.append(run_id)
        todo.extend((await runtime.status(run_id)).children)
    return found


async def _tree_views(runtime: AgentRuntime, run_id: str) -> list[RunView]:
    """The runs of the tree that have begun (a run just started may have no row yet)."""
    try:
        root = await runtime.status(run_id)
        return [root, *[await runtime.status(c) for c in await tree_ids(runtime, root)]]
    except RunNotFoundError:
        return []


async def follow_tree(
    runtime: AgentRuntime, run_id: str, interactive: bool, out: Console
) -> RunView:
    """Until the root run ends: each pending turn of any run of its tree is decided once
    (the parent's delegation, the child's refund)."""
    result = asyncio.create_task(runtime.result(run_id))
    seen: set[str] = set()
    try:
        while not result.done():
            for view in await _tree_views(runtime, run_id):
                pending = view.pending_approval
                waiting = view.status is RunStatus.WAITING_FOR_APPROVAL
                if waiting and pending is not None and pending.turn_digest not in seen:
                    seen.add(pending.turn_digest)
                    await demo.decide_pending(runtime, view, pending, interactive, out)
            await asyncio.wait({result}, timeout=POLL_SECONDS)
        return await result
    finally:
        result.cancel()
