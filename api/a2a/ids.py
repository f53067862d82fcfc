"""Ids a client chooses (task, context, message, push config), checked before any read or write:
at most as long as the column that holds them, and no control characters (PostgreSQL
refuses a NUL outright, and a refused statement must never be what the client sees)."""

from a2a.utils.errors import InvalidParamsError

from agentrt.store.db.a2a_tables import A2APushConfigRow, A2ATaskRow


def _length(column: object) -> int:
    length = getattr(getattr(column, "type", None), "length", None)
    assert isinstance(length, int)
    return length


TASK_ID = _length(A2ATaskRow.__table__.c.id)
CONTEXT_ID = _length(A2ATaskRow.__table__.c.context_id)
CONFIG_ID = _length(A2APushConfigRow.__table__.c.id)
MESSAGE_ID = _length(A2ATaskRow.__table__.c.first_message_id)


def printable(value: str) -> bool:
    return not any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in value)


def checked_id(value: str, field: str, limit: int) -> str:
    """The id as given, or InvalidParamsError (-32602) naming the field and the bound."""
    if len(value) > limit or not printable(value):
        raise InvalidParamsError(
            message=f"{field} must be at most {limit} characters, with no control characters"
        )
    return value
