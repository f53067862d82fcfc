"""Rich rendering of runs for the CLI and the demo: event lines, run status, the approval
inbox, and a live spinner that follows a run until it settles."""

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable, Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from agentrt.contracts.approval import PendingApproval
from agentrt.contracts.enums import EventKind, RunStatus
from agentrt.contracts.errors import RunNotFoundError
from agentrt.contracts.messages import ToolCall
from agentrt.contracts.run import EventView, PendingEffectView, RunView
from agentrt.starter.client import RuntimeClient
from agentrt.store.attest import UNAUTHENTICATED

STATUS_STYLE = {
    RunStatus.RUNNING: "cyan",
    RunStatus.WAITING_FOR_APPROVAL: "yellow",
    RunStatus.AWAITING_RECONCILIATION: "yellow",
    RunStatus.COMPLETED: "green",
    RunStatus.FAILED: "red",
    RunStatus.CANCELLED: "magenta",
}

OnWaiting = Callable[[RunView, PendingApproval], Awaitable[None]]


def shorten(value: Any, width: int = 80) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def call_text(call: ToolCall | dict[str, Any]) -> str:
    """`tool(key=value, ...)`: compact enough for one line, explicit enough to approve."""
    if isinstance(call, ToolCall):
        name, args = call.name, call.arguments
    else:
        name, args = str(call.get("name", "?")), call.get("arguments") or {}
    if not isinstance(args, dict):  # a privacy filter may have replaced the arguments
        return f"{name}({shorten(args, 60)})"
    inner = ", ".join(f"{k}={shorten(v, 40)}" for k, v in args.items())
    return f"{name}({inner})"


def _summary(e: EventView) -> str:
    p = e.payload
    match e.kind:
        case EventKind.RUN_STARTED:
            who = f"profile={p.get('profile')} by {p.get('initiator')}"
            return f"{who}: {shorten(p.get('prompt', ''))}"
        case EventKind.LLM:
            calls = p.get("tool_calls") or []
            said = shorten(p.get("content") or "", 60)
            wants = ", ".join(call_text(c) for c in calls if isinstance(c, dict))
            tokens = f"[{p.get('prompt_tokens', 0)}→{p.get('completion_tokens', 0)} tok"
            tokens += f", {cost_text(p['cost_usd'])}]" if "cost_usd" in p else "]"
            return " ".join(s for s in (said, f"→ {wants}" if wants else "", tokens) if s)
        case EventKind.TOOL:
            flag = " ERROR" if p.get("is_error") else ""
            call = {"name": p.get("tool"), "arguments": p.get("arguments", {})}
            return f"{call_text(call)}{flag} = {shorten(p.get('result', ''), 60)}"
        case EventKind.APPROVAL_REQUESTED:
            tools = ", ".join(str(t) for t in p.get("tools") or [])
            return f"waiting for approval of {tools} (turn {str(p.get('turn_digest', ''))[:12]})"
        case EventKind.APPROVAL:
            verdict = "approved" if p.get("approved") else "denied"
            who = str(p.get("decided_by"))
            if p.get("authenticated") is False and who.startswith(UNAUTHENTICATED):
                return f"{verdict} by {who.removeprefix(UNAUTHENTICATED)} (unauthenticated)"
            return f"{verdict} by {who}"
        case EventKind.DECISION_REFUSED:
            verdict = "approval" if p.get("approved") else "denial"
            who = str(p.get("decided_by")).removeprefix(UNAUTHENTICATED)
            return f"{verdict} by {who} refused: {p.get('attestation')} attestation"
        case EventKind.CANCEL:
            return f"cancelled by {p.get('by')}" + (f": {p['note']}" if p.get("note") else "")
        case EventKind.RUN_COMPLETED:
            return f"{p.get('reason')}: {shorten(p.get('answer', ''))}"
        case EventKind.RUN_FAILED:
            text = f"{p.get('status')} ({p.get('reason')}) {p.get('error_type') or ''}".strip()
            if p.get("error"):  # a provider's own reason, redacted
                text += f": {p['error']}"
            if "cost_usd" in p:  # the spend, e.g. of a run that exhausted its budget
                text += f" after {spend_text(p)}"
            if isinstance(budget := p.get("budget"), dict):
                limits = ", ".join(f"{k}={v}" for k, v in budget.items() if v is not None)
                text += f"; budget {limits}"
            return text
        case _:
            return shorten(p)


def cost_text(cost: object) -> str:
    """A cost in USD; None is an unknown price, never shown as $0."""
    return f"${cost:.6f}" if isinstance(cost, int | float) else "cost unknown"


def spend_text(p: dict[str, object]) -> str:
    tokens = f"{p.get('prompt_tokens', 0)}+{p.get('completion_tokens', 0)} tokens"
    return f"{tokens}, {cost_text(p.get('cost_usd'))}"


def event_text(e: EventView) -> Text:
    line = Text(f"#{e.sequence:<3} r{e.round:<2} ")
    line.append(f"{e.kind.value:<19}", style="bold")
    line.append(_summary(e))
    if e.duration_ms is not None:
        line.append(f"  {e.duration_ms:.0f} ms", style="dim")
    return line


def print_events(console: Console, events: Iterable[EventView]) -> None:
    for e in events:
        console.print(event_text(e), soft_wrap=True)


def status_text(status: RunStatus) -> Text:
    return Text(status.value, style=STATUS_STYLE.get(status, "bold"))


def effect_text(effects: dict[str, str], call_id: str) -> str:
    """A pending call's effect class as the run recorded it, for a one-line listing."""
    effect = effects.get(call_id)
    return f" [{effect}]" if effect else ""


def print_pending(
    console: Console, pending: PendingApproval, effects: dict[str, str] | None = None
) -> None:
    console.print(
        Text(f"Pending approval, turn {pending.turn_digest} (round {pending.round}):"),
        soft_wrap=True,
    )
    for call in pending.calls:
        line = f"  - {call_text(call)}{effect_text(effects or {}, call.call_id)}"
        console.print(Text(line), soft_wrap=True)


def write_rows(pe: PendingEffectView) -> list[tuple[str, str]]:
    """A fenced write as `status` shows it: enough to ask the target system about it."""
    since = pe.since.isoformat(timespec="seconds") if pe.since is not None else "-"
    if pe.arguments is not None:
        args = shorten(pe.arguments, 200)
    else:
        size = f", {pe.arguments_size} field(s)" if pe.arguments_size is not None else ""
        args = f"withheld at privacy level {pe.privacy}{size}"
    return [
        ("pending write", f"{pe.tool} ({pe.effect or 'effect unknown'})"),
        ("  call id", pe.call_id),
        ("  idempotency key", pe.idempotency_key or "-"),
        ("  fence", f"{pe.state.value} since {since}" + (f" (id {pe.fence})" if pe.fence else "")),
        ("  arguments", args),
    ]


def print_run(console: Console, view: RunView) -> None:
    """Everything `status` knows about one run."""
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column(overflow="fold")
    grid.add_row("run", view.run_id)
    grid.add_row("profile", Text(view.profile))
    grid.add_row("status", status_text(view.status))
    grid.add_row("outcome", view.outcome.value if view.outcome else "-")
    grid.add_row("reason", view.termination_reason.value if view.termination_reason else "-")
    grid.add_row("iterations", f"{view.iterations}" + (" (truncated)" if view.truncated else ""))
    grid.add_row("tokens", f"{view.prompt_tokens} prompt, {view.completion_tokens} completion")
    if view.status.terminal:  # the cost is summed when the run settles
        grid.add_row("cost", cost_text(view.cost_usd))
    grid.add_row("initiator", Text(view.initiator))
    grid.add_row("created", view.created_at.isoformat(timespec="seconds"))
    if view.finished_at is not None:
        grid.add_row("finished", view.finished_at.isoformat(timespec="seconds"))
    if view.pending_effect is not None:
        for key, value in write_rows(view.pending_effect):
            grid.add_row(key, Text(value))
    grid.add_row("answer", Text(view.answer) if view.answer is not None else "-")
    console.print(grid)
    if view.pending_approval is not None:
        print_pending(console, view.pending_approval, view.call_effects)


def print_outcome(console: Console, view: RunView) -> None:
    line = Text("Outcome: ")
    line.append(status_text(view.status))
    if view.outcome is not None and view.outcome.value != view.status.value:
        line.append(f" / {view.outcome.value}")
    reason = view.termination_reason.value if view.termination_reason else "-"
    line.append(
        f" ({reason}) after {view.iterations} iteration(s), "
        f"{view.prompt_tokens}+{view.completion_tokens} tokens"
        + (f", {cost_text(view.cost_usd)}" if view.status.terminal else "")
    )
    console.print(line, soft_wrap=True)
    if view.answer is not None:
        console.print(Text(f"Answer: {view.answer}"), soft_wrap=True)


def print_attention(console: Console, views: list[RunView]) -> None:
    """Runs that need an operator, each with its write (answer with `agentrt reconcile`)."""
    if not views:
        return
    table = Table(title="Needs attention", show_lines=False)
    table.add_column("run", no_wrap=True, min_width=36)
    table.add_column("status", no_wrap=True)
    table.add_column("write", overflow="fold")
    for v in views:
        w = v.pending_effect
        write = f"{w.tool} {w.call_id} ({w.state.value})" if w is not None else "-"
        table.add_row(*(Text(cell) for cell in (v.run_id, v.status.value, write)))
    console.print(table)


def print_inbox(console: Console, views: list[RunView]) -> None:
    if not views:
        console.print("No run is waiting for approval.")
        return
    table = Table(show_lines=False)
    table.add_column("run", no_wrap=True, min_width=36)  # ids are copied whole: never cut
    table.add_column("profile")
    table.add_column("waiting since")
    table.add_column("turn", no_wrap=True)
    table.add_column("calls", overflow="fold")
    for v in views:
        pending = v.pending_approval
        since = pending.requested_at.isoformat(timespec="seconds") if pending else "-"
        digest = pending.turn_digest[:12] if pending else "-"
        calls = (
            "\n".join(call_text(c) + effect_text(v.call_effects, c.call_id) for c in pending.calls)
            if pending
            else "-"
        )
        table.add_row(*(Text(cell) for cell in (v.run_id, v.profile, since, digest, calls)))
    console.print(table)


async def watch(
    runtime: RuntimeClient,
    run_id: str,
    console: Console,
    *,
    on_waiting: OnWaiting | None = None,
    poll_seconds: float = 0.25,
    spinner: bool = True,
) -> RunView:
    """Follow a run with a live spinner until its workflow closes; returns the settled run.

    The workflow's result decides the end (so an unknown profile, which never creates a
    row, still ends the wait with its typed error); the store feeds the spinner. Each
    pending turn is handed to `on_waiting` once. With `spinner=False` none is drawn (the
    model's text is printed as it comes meanwhile).
    """
    result = asyncio.create_task(runtime.result(run_id))
    seen: set[str] = set()
    last, count, round_ = -1, 0, 0
    started = datetime.now(UTC)
    try:
        with _status(console, f"run {run_id}: starting", spinner) as spinning:
            while not result.done():
                view = await _maybe_status(runtime, run_id)
                if view is None:
                    waited = (datetime.now(UTC) - started).total_seconds()
                    if waited > 2:  # a polling worker begins a run within moments
                        spinning.update(f"run {run_id}: no worker has begun it ({waited:.0f}s)")
                else:
                    fresh = await runtime.events(run_id, after_sequence=last)
                    if fresh:
                        last, count = fresh[-1].sequence, count + len(fresh)
                        round_ = fresh[-1].round
                    spinning.update(
                        f"run {run_id}: {view.status.value} · round {round_} · {count} event(s)"
                    )
                    pending = view.pending_approval
                    if (
                        view.status is RunStatus.WAITING_FOR_APPROVAL
                        and pending is not None
                        and pending.turn_digest not in seen
                    ):
                        seen.add(pending.turn_digest)
                        if on_waiting is not None:
                            spinning.stop()  # the handler may print or ask on the terminal
                            await on_waiting(view, pending)
                            spinning.start()
                await asyncio.wait({result}, timeout=poll_seconds)
        return result.result()
    finally:
        result.cancel()


class _NoSpinner:
    def update(self, _text: str) -> None:
        pass

    def stop(self) -> None:
        pass

    def start(self) -> None:
        pass


@contextlib.contextmanager
def _status(console: Console, text: str, shown: bool) -> Iterator[Any]:
    if not shown:
        yield _NoSpinner()
        return
    with console.status(text) as status:
        yield status


async def _maybe_status(runtime: RuntimeClient, run_id: str) -> RunView | None:
    try:
        return await runtime.status(run_id)
    except RunNotFoundError:
        return None  # started in Temporal, not yet begun by a worker
