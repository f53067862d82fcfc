"""One run as `status` and `run` show it, the pending approval of a turn, and the tables
of `inbox`: runs waiting for approval, runs that need attention."""

from rich.console import Console
from rich.table import Table
from rich.text import Text

from agentrt.contracts.approval import PendingApproval
from agentrt.contracts.budget import Allowance, BudgetState
from agentrt.contracts.views import PendingEffectView, RunView
from agentrt.starter.render.text import call_text, cost_text, effect_text, shorten, status_text


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
    if view.parent_run_id is not None:  # a child agent's run (contracts/agents.py)
        grid.add_row("parent", view.parent_run_id)
    if view.children:
        grid.add_row("children", "\n".join(view.children))
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


def print_budget(console: Console, state: BudgetState) -> None:
    """`budget`: the limits, the spend, what calls in flight reserved, the room left."""
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column()
    limits = state.budget
    grid.add_row("limits", _allowance(Allowance(
        tokens=limits.max_tokens if limits else None,
        cost_usd=limits.max_cost_usd if limits else None,
    )))  # fmt: skip
    spent = state.spent
    grid.add_row("spent", f"{spent.total_tokens} tok, {cost_text(spent.cost_usd)}")
    grid.add_row("reserved", _allowance(state.reserved))
    grid.add_row("room left", _allowance(state.room))
    console.print(grid)


def _allowance(a: Allowance) -> str:
    tokens = "no token limit" if a.tokens is None else f"{a.tokens} tok"
    cost = "no cost limit" if a.cost_usd is None else cost_text(a.cost_usd)
    return f"{tokens}, {cost}"
