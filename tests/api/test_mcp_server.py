"""The MCP server at /mcp, driven by the official `mcp` client over streamable HTTP against
the real API process, a real worker and Temporal: tools follow the token's grants and say
what their profile may do; a call starts a run as the token's principal and answers it,
or its status while it waits for approval; a retried call names the same run."""

import json
import uuid
from typing import Any

import httpx
import pytest

from agentrt.api.mcp.tools import STATUS_TOOL
from tests.api.conftest import Live
from tests.api.mcp_helpers import mcp_client, said, status_until, text
from tests.api.ops_helpers import DECIDER, REFUND, http, name, token

IDEMPOTENCY = "agentrt/idempotency_key"
ACCEPT = {"Accept": "application/json, text/event-stream"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "resender", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


async def test_tools_are_the_published_profiles_the_token_may_start(live: Live) -> None:
    secret = token(live, name("mcp"), "runs:start", "runs:read", profiles=["helper", "typed"])
    async with mcp_client(live, secret) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    # Not `redactor` or `fallback` (published, not granted), nor `internal` (not published).
    assert set(tools) == {"helper", "typed", STATUS_TOOL}
    helper, typed = tools["helper"], tools["typed"]
    assert helper.description and helper.description.startswith("Answers questions about orders")
    assert helper.input_schema["required"] == ["prompt"]
    assert helper.input_schema["properties"]["prompt"]["maxLength"] == live.runtime.max_prompt_chars
    # helper's issue_refund is a non-idempotent write: not read-only, destructive.
    assert helper.annotations is not None
    assert helper.annotations.read_only_hint is False
    assert helper.annotations.destructive_hint is True
    assert helper.annotations.idempotent_hint is False
    assert helper.output_schema is None  # a text answer
    # typed has no tools: read-only; its typed answer's schema is the output schema.
    assert typed.annotations is not None and typed.annotations.read_only_hint is True
    assert typed.output_schema is not None
    answer_schema = typed.output_schema["anyOf"][0]
    assert answer_schema["required"] == ["order_id", "total_cents"]


async def test_admin_sees_every_servable_profile_and_no_start_scope_sees_none(live: Live) -> None:
    admin = token(live, name("mcp-admin"), "admin", profiles=[])
    reader = token(live, name("mcp-reader"), "runs:read")  # granted every profile, no start
    async with mcp_client(live, admin) as client:
        names = {t.name for t in (await client.list_tools()).tools}
    # vault keeps no result (answer_level none): refused over A2A, not offered here either.
    assert {"helper", "typed", "redactor", "fallback"} <= names
    assert not names & {"vault", "internal", "guarded"}
    async with mcp_client(live, reader) as client:
        assert [t.name for t in (await client.list_tools()).tools] == [STATUS_TOOL]


async def test_typed_profile_answers_structured_content(live: Live) -> None:
    who = name("mcp-typed")
    secret = token(live, who, "runs:start", "runs:read", profiles=["typed"])
    async with mcp_client(live, secret) as client:
        result = await client.call_tool("typed", {"prompt": "the typed total of order 1042"})
    assert not result.is_error, result
    assert result.structured_content == {"order_id": "1042", "total_cents": 4999}
    assert "4999" in text(result)
    async with http(live, secret) as api:
        runs = (await api.get("/runs")).json()["runs"]
    assert [(r["profile"], r["initiator"], r["status"]) for r in runs] == [
        ("typed", who, "COMPLETED")
    ]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_write_waits_for_approval_then_the_status_tool_answers(live: Live, mode: str) -> None:
    who = name("mcp-refund")
    secret = token(live, who, *DECIDER, profiles=["helper"])
    async with mcp_client(live, secret, mode) as client:
        assert client.protocol_version == ("2026-07-28" if mode == "auto" else "2025-11-25")
        first = await client.call_tool("helper", {"prompt": REFUND})
        status = said(first)
        assert not first.is_error and status["status"] == "WAITING_FOR_APPROVAL"
        assert status["waiting_for"] == "approval"
        run_id = status["run_id"]
        assert status["approve_at"] == f"{live.url}/ui/#/runs/{run_id}"
        assert STATUS_TOOL in text(first) and run_id in text(first)
        # An operator approves through the HTTP API.
        async with http(live, secret) as api:
            view = (await api.get(f"/runs/{run_id}")).json()
            assert view["initiator"] == who
            digest = view["pending_approval"]["turn_digest"]
            ok = await api.post(
                f"/runs/{run_id}/decision", json={"verdict": "approve", "turn_digest": digest}
            )
            assert ok.status_code == 200, ok.text
        done = await status_until(client, run_id, "COMPLETED")
    assert text(done) == "Done: order 1042 was refunded in full."
    assert said(done)["answer"] == text(done)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_retried_call_returns_the_same_run(live: Live, mode: str) -> None:
    who = name("mcp-retry")
    secret = token(live, who, "runs:start", "runs:read", profiles=["helper"])
    key = {IDEMPOTENCY: f"order-1042-{uuid.uuid4().hex}"}
    async with mcp_client(live, secret, mode) as client:
        first = said(await client.call_tool("helper", {"prompt": REFUND}, meta=key))
    async with mcp_client(live, secret, mode) as again:  # a new connection: the key names it
        second = said(await again.call_tool("helper", {"prompt": REFUND}, meta=key))
        other = said(await again.call_tool("helper", {"prompt": REFUND}))
    assert first["run_id"] == second["run_id"] != other["run_id"]
    assert second["status"] == "WAITING_FOR_APPROVAL"
    async with http(live, secret) as api:
        runs = (await api.get("/runs")).json()["runs"]
    assert sorted(r["run_id"] for r in runs) == sorted({first["run_id"], other["run_id"]})


async def test_a_call_sent_twice_in_a_session_under_one_request_id_is_one_run(live: Live) -> None:
    """Without an idempotency key, the session and the JSON-RPC request id name the run: a
    message delivered twice (a client resending after a lost answer) starts one run."""
    who = name("mcp-resend")
    secret = token(live, who, "runs:start", "runs:read", profiles=["helper"])
    headers = {"Authorization": f"Bearer {secret}", **ACCEPT}
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "helper", "arguments": {"prompt": REFUND}}}  # fmt: skip
    async with httpx.AsyncClient(base_url=live.url, headers=headers, timeout=60) as raw:
        opened = await raw.post("/mcp", json=INITIALIZE)
        assert opened.status_code == 200, opened.text
        session = {"Mcp-Session-Id": opened.headers["mcp-session-id"],
                   "Mcp-Protocol-Version": "2025-11-25"}  # fmt: skip
        await raw.post("/mcp", json=INITIALIZED, headers=session)
        answers = [_sse_result(await raw.post("/mcp", json=call, headers=session)) for _ in "ab"]
    assert answers[0]["run_id"] == answers[1]["run_id"]
    async with http(live, secret) as api:
        runs = (await api.get("/runs")).json()["runs"]
    assert [r["run_id"] for r in runs] == [answers[0]["run_id"]]


def _sse_result(reply: httpx.Response) -> dict[str, Any]:
    assert reply.status_code == 200, reply.text
    data = [line[6:] for line in reply.text.splitlines() if line.startswith("data: ")]
    message = json.loads(data[-1])
    structured: dict[str, Any] = message["result"]["structuredContent"]
    return structured


async def test_a_models_question_is_the_answer_of_a_call(live: Live) -> None:
    """Only a run serving an A2A task pauses for input (workflows/_loop.py); a run started
    over MCP, as one started by POST /runs, answers with the model's question."""
    secret = token(live, name("mcp-ask"), "runs:start", "runs:read", profiles=["helper"])
    async with mcp_client(live, secret) as client:
        asked = await client.call_tool("helper", {"prompt": "which order is mine?"})
    assert not asked.is_error and text(asked) == "Which order number do you mean?"


async def test_a_failed_run_is_an_error_result_with_its_failure_code(live: Live) -> None:
    secret = token(live, name("mcp-fail"), "runs:start", "runs:read", profiles=["typed"])
    async with mcp_client(live, secret) as client:
        failed = await client.call_tool("typed", {"prompt": "the typed nonsense of order 1042"})
    status = said(failed)
    assert failed.is_error and status["status"] == "FAILED" and status["error_type"]
    assert f"ended FAILED ({status['error_type']})" in text(failed)
