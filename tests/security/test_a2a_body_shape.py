"""Issue 41, L10: a large structured A2A body never holds the API's event loop.

The SDK parses each request on the event loop (`json.loads`, then protobuf's `ParseDict`
at about 13 µs a value): a 1 MB body of small values held the loop for 2 to 3 s. The
guard now measures a body's structure first (in a thread when it is large) and refuses one
past the bounds (api/a2a/shape.py) with a 400 in its binding's format; the server in this
process, with the production body limit of 1 MB, is measured by a ticker on its own loop
(the stalls it computed, judged against a quiet baseline: tests/security/_loop_lag.py)."""

import json
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest_asyncio
from temporalio.client import Client

from agentrt.api.a2a.shape import MAX_DEPTH, MAX_VALUES
from agentrt.api.a2a.shape import shape_problem as body_shape
from agentrt.api.settings import ApiSettings
from agentrt.workers.compose import WorkerResources
from tests.api.conftest import Live, _serve
from tests.security._loop_lag import held_in_every_try, ticking

BODY_LIMIT = 1_000_000  # AGENTRT_API_MAX_BODY_BYTES' default


def _message(parts: list[dict[str, Any]], metadata: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER",
                               "parts": parts}  # fmt: skip
    if metadata is not None:
        message["metadata"] = metadata
    return {"message": message}


# Shapes near the body limit that each held the loop for seconds in the SDK's parse.
SHAPES: dict[str, Callable[[], dict[str, Any]]] = {
    "60,000 one-letter parts": lambda: _message([{"text": "a"}] * 60_000),
    "metadata of 60,000 keys": lambda: _message(
        [{"text": "hi"}], {f"k{i}": i for i in range(60_000)}
    ),
    "metadata of 120,000 numbers": lambda: _message([{"text": "hi"}], {"l": list(range(120_000))}),
    "metadata of nested arrays": lambda: _message([{"text": "hi"}], {"l": [[1, 2, 3]] * 60_000}),
    "metadata nested 900 deep": lambda: _message(
        [{"text": "hi"}], {"l": json.loads("[" * 900 + "]" * 900)}
    ),
}


def test_the_bounds_refuse_the_shapes_and_pass_a_real_message() -> None:
    for name, make in SHAPES.items():
        assert body_shape(json.dumps(make()).encode()) is not None, name
    deep = b'{"message": {"metadata": {"l": ' + b"[" * 100_000 + b"]" * 100_000 + b"}}}"
    assert body_shape(deep) is not None
    real = _message([{"text": "x" * 900_000}, {"text": "and one more"}], {"skill": "helper"})
    assert body_shape(json.dumps(real).encode()) is None
    at = _message([{"text": "a"}] * ((MAX_VALUES - 10) // 2))
    assert body_shape(json.dumps(at).encode()) is None
    nested: Any = 1
    for _ in range(MAX_DEPTH - 4):
        nested = [nested]
    assert body_shape(json.dumps(_message([{"text": "a"}], {"n": nested})).encode()) is None
    assert body_shape(b"{not json") is None  # the SDK's to refuse, with its parse error


@pytest_asyncio.fixture
async def megabyte(
    client: Client, a2a_settings: ApiSettings, a2a_parts: WorkerResources
) -> AsyncIterator[Live]:
    settings = a2a_settings.replace(api={"max_body_bytes": BODY_LIMIT})
    async with _serve(client, settings, a2a_parts) as served:
        yield served


async def test_large_structured_bodies_never_hold_the_apis_event_loop_100ms(
    megabyte: Live,
) -> None:
    # Made before the ticker starts: the test's own encoding is not the server's stall.
    bodies = {name: json.dumps(make()).encode() for name, make in SHAPES.items()}
    rpcs = {name: b'{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": ' + body + b"}"
            for name, body in bodies.items()}  # fmt: skip
    assert all(len(b) <= BODY_LIMIT for b in bodies.values()), {
        k: len(b) for k, b in bodies.items()
    }
    headers = {**megabyte.headers(), "Content-Type": "application/json"}
    async with httpx.AsyncClient(timeout=60) as http:
        await http.get(megabyte.url + "/healthz")  # warm up, not measured
        # Quiet: as many requests, each refused at once (an unknown task).
        quiet_body = b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}'
        async with ticking() as quiet:
            for _ in bodies:
                await http.post(megabyte.url + "/", content=quiet_body, headers=headers)
                await http.get(megabyte.url + "/rest/tasks/x", headers=headers)

        async def loud() -> None:
            for name, body in bodies.items():
                reply = await http.post(megabyte.url + "/", content=rpcs[name], headers=headers)
                assert reply.status_code == 400, (name, reply.text[:200])
                assert reply.json()["error"]["code"] == -32600 and "JSON values" in reply.text
                rest = await http.post(
                    megabyte.url + "/rest/message:send", content=body, headers=headers
                )
                assert rest.status_code == 400, (name, rest.text[:200])
                assert rest.json()["error"]["details"][0]["reason"] == "BODY_TOO_COMPLEX"

        problem = await held_in_every_try(loud, quiet)
    assert problem is None, problem
