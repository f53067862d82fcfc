"""A toolbox for `agentrt-worker --list-tools`: one tool that declares nothing, one that
declares its effect and carries a reconcile probe (as `@tool(reconcile=...)` attaches it)."""

from agentrt import Toolbox, ToolEffect, tool


@tool  # no effect declared: a non-idempotent write (the default)
def stamp_letter(to: str) -> str:
    """Stamp a letter for `to`."""
    return f"stamped for {to}"


@tool(effect=ToolEffect.IDEMPOTENT_WRITE)
def put_note(key: str, text: str) -> str:
    """Keep a note under a key."""
    return f"kept {key}"


def find_note(key: str, arguments: dict[str, str]) -> str:
    """The probe: whether the note for this idempotency key is there."""
    return "unknown"


put_note.reconcile = find_note  # type: ignore[attr-defined]
toolbox = Toolbox("samples", [stamp_letter, put_note])
