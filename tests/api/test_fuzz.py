"""A seeded slice of the A2A fuzz job (bench/fuzz_a2a.py): JSON-RPC and REST requests built
from the A2A proto against the live server, over tasks in each state. No 5xx, no traceback
logged, and a rejected request changes no row."""

import asyncio

import httpx

from bench.fuzz_a2a import a2a_surfaces
from bench.fuzz_core import LogTrap
from tests.api.conftest import KEYS, Live, user_message

CASES = {"rpc": 100, "rest": 40}


async def _task(live: Live, text: str) -> str:
    body = await live.rpc("SendMessage", {"message": user_message(text)})
    task_id: str = body["result"]["task"]["id"]
    return task_id


async def test_a_body_that_is_not_utf8_is_a_parse_error_without_a_traceback(live: Live) -> None:
    # Found by the fuzz job: the SDK answered InternalError and logged a traceback.
    with LogTrap() as trap:
        async with httpx.AsyncClient() as http:
            reply = await http.post(
                live.url + "/",
                content=b"\x90\x90)",
                headers={**live.headers(), "Content-Type": "application/json"},
            )
            shape = await http.post(live.url + "/", json=[{}], headers=live.headers())
    assert reply.status_code == 200 and reply.json()["error"]["code"] == -32700
    assert shape.json()["error"]["code"] == -32600
    assert trap.tracebacks == []


async def test_fuzzed_a2a_requests_get_typed_errors_and_change_nothing(live: Live) -> None:
    # A completed task, one waiting for input, one waiting for approval.
    ids = [await _task(live, t) for t in ("hello", "which order", "refund order 1042")]
    with LogTrap() as trap:
        tallies = await asyncio.to_thread(
            a2a_surfaces, live.url, live.parts.engine, ids, KEYS, CASES.__getitem__, None, trap
        )
    for t in tallies:
        assert t.cases == CASES["rpc" if "RPC" in t.surface else "rest"], t
        assert t.rejected > 0 and t.accepted + t.rejected == t.cases, t
        if "RPC" in t.surface:
            # 100 JSON-RPC cases always reach an accepted request; schemathesis's 40 REST
            # cases do only on some orders of the suite (seen: 0 after other API tests), so
            # the REST slice is held to its verdicts, the 10,000-case job to its reach.
            assert t.accepted > 0, t
        assert t.failures == [], (t.surface, t.failures)
