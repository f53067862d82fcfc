"""A toolbox for `agentrt-worker --list-tools`: one tool that declares nothing, one that
declares its effect and carries a reconcile probe (`@tool(reconcile=...)`)."""

from agentrt import Reconciled, Toolbox, ToolEffect, tool


@tool  # no effect declared: a non-idempotent write (the default)
def stamp_letter(to: str) -> str:
    """Stamp a letter for `to`."""
    return f"stamped for {to}"


def find_note(key: str, arguments: dict[str, str]) -> Reconciled:
    """The probe: whether the note for this idempotency key is there."""
    return Reconciled.unknown()


@tool(effect=ToolEffect.IDEMPOTENT_WRITE, reconcile=find_note)
def put_note(key: str, text: str) -> str:
    """Keep a note under a key."""
    return f"kept {key}"


toolbox = Toolbox("samples", [stamp_letter, put_note])
