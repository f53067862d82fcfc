"""A run's events, one line each: `#seq rround kind  summary  duration`."""

from collections.abc import Iterable
from typing import Any

from rich.console import Console
from rich.text import Text

from agentrt.contracts.enums import EventKind
from agentrt.contracts.views import EventView
from agentrt.starter.render.text import call_text, cost_text, shorten, spend_text
from agentrt.store.security.attest import UNAUTHENTICATED

Payload = dict[str, Any]


def _summary(e: EventView) -> str:
    p = e.payload
    match e.kind:
        case EventKind.RUN_STARTED:
            who = f"profile={p.get('profile')} by {p.get('initiator')}"
            return f"{who}: {shorten(p.get('prompt', ''))}"
        case EventKind.LLM:
            return _llm(p)
        case EventKind.TOOL:
            flag = " ERROR" if p.get("is_error") else ""
            call = {"name": p.get("tool"), "arguments": p.get("arguments", {})}
            return f"{call_text(call)}{flag} = {shorten(p.get('result', ''), 60)}"
        case EventKind.APPROVAL_REQUESTED:
            tools = ", ".join(str(t) for t in p.get("tools") or [])
            return f"waiting for approval of {tools} (turn {str(p.get('turn_digest', ''))[:12]})"
        case EventKind.APPROVAL:
            return _approval(p)
        case EventKind.RECONCILE_REQUESTED:
            return f"{p.get('tool')} ({p.get('call_id')}) interrupted: waiting for an answer"
        case EventKind.RECONCILED:
            return _reconciled(p)
        case EventKind.DECISION_REFUSED:
            verdict = "approval" if p.get("approved") else "denial"
            who = str(p.get("decided_by")).removeprefix(UNAUTHENTICATED)
            return f"{verdict} by {who} refused: {p.get('attestation')} attestation"
        case EventKind.OUTPUT_INVALID:
            return _output_invalid(p)
        case EventKind.WRITE_RESOLVED:
            note = f": {shorten(p['note'], 60)}" if p.get("note") else ""
            what = f"{p.get('tool')} ({p.get('call_id')}) {p.get('outcome')}"
            return f"{what}, by {p.get('resolved_by')}{note}"
        case EventKind.INPUT_REFUSED:
            who = str(p.get("sent_by")).removeprefix(UNAUTHENTICATED)
            why = f"{p.get('attestation')} attestation"
            return f"input {p.get('message_id')} from {who} refused: {why}"
        case EventKind.CANCEL:
            return f"cancelled by {p.get('by')}" + (f": {p['note']}" if p.get("note") else "")
        case EventKind.RUN_COMPLETED:
            return f"{p.get('reason')}: {shorten(p.get('answer', ''))}"
        case EventKind.RUN_FAILED:
            return _failed(p)
        case _:
            return shorten(p)


def _llm(p: Payload) -> str:
    calls = p.get("tool_calls") or []
    said = shorten(p.get("content") or "", 60)
    wants = ", ".join(call_text(c) for c in calls if isinstance(c, dict))
    tokens = f"[{p.get('prompt_tokens', 0)}→{p.get('completion_tokens', 0)} tok"
    tokens += f", {cost_text(p['cost_usd'])}" if "cost_usd" in p else ""
    if "reserved_tokens" in p:  # the worst case its budget reserved for it
        tokens += f"; reserved {_amount(p['reserved_tokens'], p.get('reserved_cost_usd'))}"
    tokens += "]"
    return " ".join(s for s in (said, f"→ {wants}" if wants else "", tokens) if s)


def _approval(p: Payload) -> str:
    verdict = "approved" if p.get("approved") else "denied"
    who = str(p.get("decided_by"))
    if p.get("authenticated") is False and who.startswith(UNAUTHENTICATED):
        who = f"{who.removeprefix(UNAUTHENTICATED)} (unauthenticated)"
    return f"{verdict} by {who}" + (f": {p['reason']}" if p.get("reason") else "")


def _reconciled(p: Payload) -> str:
    then = f", then {p['then']}" if p.get("then") else ""
    why = f": {p['reason']}" if p.get("reason") else ""
    return (
        f"{p.get('tool')} ({p.get('call_id')}) answered {p.get('answer')}{then} "
        f"by {p.get('answered_by')}{why}"
    )


def _output_invalid(p: Payload) -> str:
    rules = ", ".join(
        f"{c.get('rule')} at {c.get('schema_path') or '(root)'}"
        for c in p.get("checks") or []
        if isinstance(c, dict)
    )
    why = p.get("content") or f"{p.get('content_size', 0)} characters withheld"
    return f"answer rejected ({rules or 'invalid'}): {shorten(why, 200)}"


def _failed(p: Payload) -> str:
    text = f"{p.get('status')} ({p.get('reason')}) {p.get('error_type') or ''}".strip()
    if p.get("error"):  # a provider's own reason, redacted
        text += f": {p['error']}"
    if "cost_usd" in p:  # the spend, e.g. of a run that exhausted its budget
        text += f" after {spend_text(p)}"
    if isinstance(budget := p.get("budget"), dict):
        limits = ", ".join(f"{k}={v}" for k, v in budget.items() if v is not None)
        text += f"; budget {limits}"
    room, worst = p.get("room"), p.get("reserved")
    if isinstance(room, dict):  # stopped before a call whose worst case had no room
        needed = "unknown"
        if isinstance(worst, dict):
            needed = _amount(worst.get("tokens"), worst.get("cost_usd"))
        left = _amount(room.get("tokens"), room.get("cost_usd"))
        text += f"; next call's worst case {needed} > room left {left}"
    return text


def _amount(tokens: object, cost: object) -> str:
    """Tokens and cost of a reservation or a room ("-": no limit on that side)."""
    shown = f"{tokens} tok" if tokens is not None else "- tok"
    return shown + (f", {cost_text(cost)}" if isinstance(cost, int | float) else "")


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
