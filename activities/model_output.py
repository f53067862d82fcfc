"""A model answer against the run's output schema, off the event loop when it is long (as
the guardrails are): the model activity's checks of a typed answer."""

from collections.abc import Sequence
from typing import Any

from agentrt.activities._common import offload
from agentrt.activities.guardrails import INLINE_CHARS
from agentrt.contracts.output import OutputCheck, output_checks, parse_output
from agentrt.contracts.run import ModelRequest


async def invalid_answer(req: ModelRequest, text: str, calls: Sequence[object]) -> bool:
    """Whether a tool-less reply fails the run's output schema (none: never)."""
    schema = req.answer.output_schema
    return schema is not None and not calls and (await checked_output(text, schema))[1] is not None


async def checked_output(text: str, schema: dict[str, Any]) -> tuple[Any, str | None]:
    """`parse_output`, off the event loop for a long answer (linear in it, but validating a
    long one in Python is not free) and on it for a short one, as the guardrails are."""
    if len(text) <= INLINE_CHARS:
        return parse_output(text, schema)
    return await offload(parse_output, text, schema)


async def failed_checks(text: str, schema: dict[str, Any]) -> list[OutputCheck]:
    """`output_checks`, off the event loop for a long answer, as `checked_output`."""
    if len(text) <= INLINE_CHARS:
        return output_checks(text, schema)
    return await offload(output_checks, text, schema)
