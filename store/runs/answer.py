"""The answer ceiling: what of a run's result may be kept (the profile's answer level,
tightened by any stricter provider that answered the run)."""

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from agentrt.contracts.profiles import stricter
from agentrt.contracts.redaction import redact_text, redact_tree
from agentrt.contracts.snapshot import RunSnapshot
from agentrt.store.db.tables import RunRow


class ResultNotRetainableError(Exception):
    """The run's answer ceiling does not allow keeping its result (metadata / none)."""


def keep_text(text: str, level: str) -> str:
    """What of a text may be stored at an answer level; refuses metadata / none."""
    if level == "full":
        return text
    if level == "redacted":
        return redact_text(text, max_chars=None)
    raise ResultNotRetainableError(level)


def keep_json(value: Any, level: str) -> Any:
    """What of a typed answer's object may be stored at an answer level, as `keep_text`
    keeps its text: whole, or each string (object keys too) redacted; refuses metadata /
    none."""
    if level == "full":
        return value
    if level != "redacted":
        raise ResultNotRetainableError(level)
    return redact_tree(value, max_chars=None)


def answer_ceiling(s: Session, run_id: str) -> str:
    """The ceiling in force, read in the caller's (row-locked) transaction."""
    raw, tightened = s.execute(
        select(RunRow.snapshot, RunRow.answer_ceiling).where(RunRow.id == run_id)
    ).one()
    return ceiling_of(raw, tightened)


def ceiling_of(snapshot: str | None, tightened: str | None) -> str:
    """The ceiling from a run row's snapshot and answer_ceiling columns, already read."""
    return stricter(RunSnapshot.parse(snapshot).answer_level, tightened)
