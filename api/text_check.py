"""Text the store or a JSON encoder cannot take, refused at the door with a 400.

PostgreSQL refuses a NUL character in any text parameter: a NUL in a `GET /runs` filter or
a start's profile name was a 500 whose traceback logged the SQL and its parameters. A lone
surrogate (`"\\ud800"` in a JSON body) is no Unicode text at all: a start's prompt holding
one failed when its workflow input was encoded, a 500 with a traceback. Both are refused
here, before routing, for every operator route: in the path, the query and (every string
and key of) a JSON body. So is a body nested deeper than MAX_DEPTH (the route's parse of a
deeper one raised RecursionError: a 500). A body holding no `\\u` escape, no NUL byte and
few brackets can hold none of these (JSON carries no raw control character), so most
bodies are not parsed here at all."""

import asyncio
import json
from typing import Any

from starlette.types import Scope

from agentrt.contracts.output import MAX_DEPTH, depth

# A body up to this size is checked on the event loop (parsing it costs well under a
# millisecond); a larger one in a thread.
INLINE_BYTES = 64_000
TOO_DEEP = f"the request body nests objects or arrays deeper than {MAX_DEPTH} levels"


def url_problem(scope: Scope) -> str | None:
    """Why the request's path or query cannot be served, or None."""
    query: bytes = scope.get("query_string", b"")
    if "\x00" in scope.get("path", "") or b"\x00" in query or b"%00" in query:
        return "the request's path or query holds a NUL character"
    return None


async def body_problem(body: bytes) -> str | None:
    """Why the JSON body cannot be served, or None (a body that is not JSON is the
    route's to refuse)."""
    brackets = body.count(b"[") + body.count(b"{")
    if b"\\u" not in body and b"\x00" not in body and brackets <= MAX_DEPTH:
        return None
    if len(body) <= INLINE_BYTES:
        return json_problem(body)
    return await asyncio.to_thread(json_problem, body)


def json_problem(body: bytes) -> str | None:
    try:
        value = json.loads(body)
    except RecursionError:
        return TOO_DEEP
    except ValueError:
        return None
    if depth(value) > MAX_DEPTH:
        return TOO_DEEP
    return _tree_problem(value)


def _tree_problem(value: Any) -> str | None:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if (problem := _text_problem(item)) is not None:
                return problem
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


def _text_problem(text: str) -> str | None:
    if "\x00" in text:
        return "the request body holds a NUL character: send text without it"
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return "the request body holds a lone surrogate (\\ud800-\\udfff unpaired): not text"
    return None
