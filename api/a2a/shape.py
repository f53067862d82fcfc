"""How much structure an A2A request body may hold, measured without parsing it.

The A2A SDK parses a request on the event loop: `json.loads`, then protobuf's `ParseDict`,
which costs about 13 µs per JSON value. A 1 MB body of small values (60,000 one-letter
parts, or metadata of nested arrays) held the API's loop for 2 to 3 s, every other request
and stream waiting. A body with more than MAX_VALUES values, or nested deeper than
MAX_DEPTH, is therefore refused (400, in its binding's format) before the SDK sees it, so
what the SDK parses on the loop is bounded: tens of milliseconds at the 1 MB body limit.

The measure is no parse (`json.loads` of such a body holds the GIL, in a thread or not,
about as long as the SDK's own parse would): escaped backslashes and quotes are masked,
the text is split at its quotes and the pieces outside strings joined, and what is left is
counted: each step one pass in C, milliseconds for a megabyte, with no Python step per
value. A message is a few text parts and a little metadata: the bounds are far above any
real one, and a body under them with few brackets is not even split."""

MAX_VALUES = 4_000
MAX_DEPTH = 32
TOO_COMPLEX = (
    f"the request body holds more than {MAX_VALUES:,} JSON values or nests deeper than "
    f"{MAX_DEPTH} levels: an A2A message is a few text parts and a little metadata"
)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def shape_problem(body: bytes) -> str | None:
    """TOO_COMPLEX for a body past the bounds, else None (a body that is not JSON is the
    SDK's to refuse, with its parse error)."""
    opened = body.count(b"[") + body.count(b"{")
    if opened <= MAX_DEPTH and body.count(b",") + opened < MAX_VALUES:
        return None  # the common case: commas and brackets in strings counted too, and few
    # Outside strings: with `\\` and `\"` masked, every quote left opens or closes one.
    masked = body.replace(b"\\\\", b"__").replace(b'\\"', b"__")
    outside = b"".join(masked.split(b'"')[0::2])
    brackets = outside.translate(None, _NOT_BRACKETS)
    # Values: one per comma, one first member per container, the body itself (an upper
    # bound, by the empty containers).
    values = outside.count(b",") + len(brackets) // 2 + 1
    if values > MAX_VALUES or _depth(brackets) > MAX_DEPTH:
        return TOO_COMPLEX
    return None


def _depth(brackets: bytes) -> int:
    """The deepest nesting of a run of brackets (at most about 2 * MAX_VALUES of them: the
    value count is checked first)."""
    deepest = level = 0
    for b in brackets:
        level += 1 if b in b"[{" else -1
        deepest = max(deepest, level)
    return deepest
