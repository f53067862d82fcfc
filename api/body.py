"""Reading a request body once, under a size limit, in ASGI middleware, and handing the app
a `receive` that replays it."""

from starlette.types import Message, Receive

TOO_LARGE = object()  # the body passed the limit: answer 413, nothing reaches the app


async def read_body(receive: Receive, limit: int) -> bytes | object | None:
    """The whole body; TOO_LARGE once it passes `limit`; None if the client went away."""
    body, more = bytearray(), True
    while more:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        body += message.get("body", b"")
        more = bool(message.get("more_body", False))
        if len(body) > limit:
            return TOO_LARGE
    return bytes(body)


def replaying(body: bytes, receive: Receive) -> Receive:
    """A `receive` that yields `body` first, then whatever the connection sends next."""
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
