"""What the demos share: who starts and who approves, the migrate step, the approval
of a pending turn (automatic, or asked at the terminal) and the Temporal Web link."""

import asyncio
import contextlib
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.text import Text

from agentrt.contracts.approval import PendingApproval
from agentrt.contracts.views import RunView
from agentrt.core.settings import Settings
from agentrt.starter import render
from agentrt.starter.facade import AgentRuntime
from agentrt.store.db.open import open_store
from agentrt.store.db.sealing import Sealer

DEMO_INITIATOR = "demo-user"
DEMO_APPROVER = "demo-operator"  # not the initiator: four-eyes refuses self-approval


@dataclass(frozen=True)
class DemoOptions:
    data_dir: Path
    port: int | None = None
    ui_port: int | None = None
    interactive: bool = False
    keep_running: bool = False
    team: bool = False  # `--team`: a triage agent, a child agent and a remote agent


async def hold_if_asked(opts: DemoOptions, ui_port: int, out: Console) -> None:
    """With --keep-running, stay up (worker, dev server) until a signal cancels us."""
    if opts.keep_running:
        out.print(
            f"Server and worker stay up: Temporal Web at http://127.0.0.1:{ui_port}"
            " — press Ctrl-C to stop.",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        await asyncio.Event().wait()


def web_url(ui_port: int, run_id: str, namespace: str = "default") -> str:
    return f"http://127.0.0.1:{ui_port}/namespaces/{namespace}/workflows/{run_id}"


def prepare_data(settings: Settings) -> None:
    """The schema at head and the seal key, as `agentrt migrate` makes them."""
    sealer = Sealer.from_b64(settings.create_seal_key_if_missing())
    engine, _ = open_store(settings.database.resolved_url(), sealer)
    engine.dispose()


async def decide_pending(
    runtime: AgentRuntime,
    view: RunView,
    pending: PendingApproval,
    interactive: bool,
    out: Console,
) -> None:
    """Show a waiting run's pending calls and decide them as DEMO_APPROVER."""
    out.print(
        Text(f"Run {view.run_id} ({view.profile}) is {view.status.value}: the agent wants to act."),
        soft_wrap=True,
    )
    render.print_pending(out, pending, view.call_effects)
    if interactive:
        approved = await ask_yes_no("Approve these calls? [y/N] ", out)
        how = "at the prompt"
    else:
        approved, how = True, "automatically (use --interactive to decide yourself)"
    await runtime.approve(
        view.run_id,
        approved=approved,
        decided_by=DEMO_APPROVER,
        turn_digest=pending.turn_digest,
        reason=f"demo: decided {how.split(' (')[0]}",
    )
    verdict = "Approved" if approved else "Denied (the run goes on with a refusal)"
    out.print(
        f"{verdict} as {DEMO_APPROVER}, {how}.", markup=False, highlight=False, soft_wrap=True
    )


async def ask_yes_no(question: str, out: Console) -> bool:
    """Read one line without blocking the loop. A daemon thread, not the default executor:
    on Ctrl-C the demo must not wait at exit for a line that never comes."""
    out.print(question, end="", markup=False, highlight=False)
    loop = asyncio.get_running_loop()
    answer: asyncio.Future[str] = loop.create_future()

    def deliver(line: str) -> None:
        if not answer.done():
            answer.set_result(line)

    def read() -> None:
        try:
            line = sys.stdin.readline()
        except (OSError, ValueError):
            line = ""
        with contextlib.suppress(RuntimeError):  # the loop may be gone already
            loop.call_soon_threadsafe(deliver, line)

    threading.Thread(target=read, name="demo-prompt", daemon=True).start()
    return (await answer).strip().lower() in {"y", "yes"}  # EOF or anything else: deny
