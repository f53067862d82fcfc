"""The `payments` toolbox of the reconciliation tests: `pay`, one non-idempotent write whose
body and probe each test gives, and a payer profile that runs it."""

from collections.abc import Callable
from typing import Any

from agentrt import Profile, Reconciled, Timeouts, Toolbox, ToolContext, tool
from tests._rules import new_queue, scripted_profile

Probe = Callable[[str, dict[str, Any]], Reconciled]
# A write cut short is seen within seconds (its heartbeat), not the default minutes.
WRITE_TIMEOUTS = Timeouts(write_seconds=5, write_heartbeat_seconds=3)


def payments(body: Callable[[str, str], str], probe: Probe | None) -> Toolbox:
    """`pay(invoice)`: a non-idempotent write whose body is `body(idempotency_key, invoice)`,
    reconciled by `probe` (None: no probe)."""

    @tool(reconcile=probe)
    def pay(invoice: str, ctx: ToolContext) -> str:
        """Pay an invoice (not idempotent)."""
        return body(ctx.idempotency_key, invoice)

    return Toolbox("payments", [pay])


def payer(**more: Any) -> Profile:
    """A scripted profile that pays through `payments` on a queue of its own, with
    WRITE_TIMEOUTS; `more`: other Profile fields."""
    return scripted_profile(
        "payer", "You pay invoices.", "payments", new_queue(), timeouts=WRITE_TIMEOUTS, **more
    )
