"""The MCP server's refusals (api/mcp/): no token or a bad one is a 401 before the MCP
layer; a session answers only the token that opened it; a tool the token may not start,
an unknown or unpublished one, bad arguments or a bad idempotency key are clear MCP errors
and start nothing; no error carries SQL, a host or a traceback."""

import json
from typing import Any

import httpx
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS
from temporalio.client import Client as TemporalClient

from agentrt.api.mcp.errors import FORBIDDEN
from agentrt.api.mcp.tools import STATUS_TOOL
from agentrt.api.settings import ApiSettings
from agentrt.store.security.principals import PrincipalStore
from tests.api.conftest import Live, serving
from tests.api.mcp_helpers import mcp_client, said
from tests.api.ops_helpers import REFUND, http, name, token

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream"}
CAP = 1000
LEAKS = ("Traceback", "SELECT", "INSERT", "sqlalchemy", "127.0.0.1", 'File "')


async def refusal(client: Client, tool: str, arguments: dict[str, Any], **kw: Any) -> MCPError:
    with pytest.raises(MCPError) as caught:
        await client.call_tool(tool, arguments, **kw)
    error = caught.value
    assert not any(leak in error.message for leak in LEAKS), error.message
    return error


async def runs_of(live: Live, secret: str) -> list[dict[str, Any]]:
    async with http(live, secret) as api:
        runs: list[dict[str, Any]] = (await api.get("/runs")).json()["runs"]
    return runs


@pytest.mark.parametrize("header", [None, "Bearer", "Bearer not-a-token", "Basic abc"])
async def test_no_valid_token_is_401_before_the_mcp_layer(live: Live, header: str | None) -> None:
    headers = {**ACCEPT, **({"Authorization": header} if header else {})}
    async with httpx.AsyncClient(timeout=30) as raw:
        reply = await raw.post(live.url + "/mcp", json=INITIALIZE, headers=headers)
    assert reply.status_code == 401
    assert reply.headers["www-authenticate"].startswith("Bearer")
    assert reply.json()["error"]["type"] == "unauthorized"


async def test_a_revoked_token_is_refused_at_its_next_request(live: Live) -> None:
    store = PrincipalStore(live.parts.ctx)
    info, secret = store.create(name("mcp-revoked"), ["runs:start"], profiles=["helper"])
    async with httpx.AsyncClient(timeout=30) as raw:
        auth = {**ACCEPT, "Authorization": f"Bearer {secret}"}
        opened = await raw.post(live.url + "/mcp", json=INITIALIZE, headers=auth)
        assert opened.status_code == 200
        assert store.revoke(info.id)
        again = await raw.post(live.url + "/mcp", json=INITIALIZE, headers=auth)
    assert again.status_code == 401


async def test_a_session_answers_only_the_token_that_opened_it(live: Live) -> None:
    alice = token(live, name("mcp-a"), "runs:start", profiles=["helper"])
    bob = token(live, name("mcp-b"), "runs:start", profiles=["helper"])
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
    async with httpx.AsyncClient(timeout=30) as raw:
        opened = await raw.post(
            live.url + "/mcp",
            json=INITIALIZE,
            headers={**ACCEPT, "Authorization": f"Bearer {alice}"},
        )
        session = opened.headers["mcp-session-id"]
        stolen = await raw.post(
            live.url + "/mcp",
            json=listing,
            headers={
                **ACCEPT,
                "Authorization": f"Bearer {bob}",
                "Mcp-Session-Id": session,
                "Mcp-Protocol-Version": "2025-06-18",
            },
        )
    assert stolen.status_code == 404  # as if the session did not exist


async def test_a_profile_not_granted_is_refused_and_nothing_starts(live: Live) -> None:
    secret = token(live, name("mcp-ungranted"), "runs:start", "runs:read", profiles=["typed"])
    async with mcp_client(live, secret) as client:
        error = await refusal(client, "helper", {"prompt": REFUND})
    assert error.code == FORBIDDEN and error.data == {"type": "profile_not_granted"}
    assert "not granted the profile 'helper'" in error.message
    assert await runs_of(live, secret) == []


async def test_a_token_without_runs_start_starts_nothing(live: Live) -> None:
    secret = token(live, name("mcp-reader"), "runs:read")  # every profile granted, no start
    async with mcp_client(live, secret) as client:
        error = await refusal(client, "typed", {"prompt": "the typed total"})
    assert error.code == FORBIDDEN and error.data == {"type": "forbidden"}
    assert await runs_of(live, secret) == []


@pytest.mark.parametrize("tool", ["nope", "internal", "vault", "x" * 5000])
async def test_unknown_and_unpublished_tools_are_unknown(live: Live, tool: str) -> None:
    # `internal` is granted but not published; `vault` is published but keeps no result.
    secret = token(live, name("mcp-unknown"), "runs:start", "runs:read")
    async with mcp_client(live, secret) as client:
        error = await refusal(client, tool, {"prompt": "hello"})
    assert error.code == INVALID_PARAMS and error.data == {"type": "unknown_tool"}
    assert len(error.message) < 300
    assert await runs_of(live, secret) == []


@pytest.mark.parametrize(
    ("arguments", "meta", "kind"),
    [
        ({}, None, "invalid_request"),
        ({"prompt": 7}, None, "invalid_request"),
        ({"prompt": "hi", "max_iterations": 50}, None, "unknown_fields"),
        ({"prompt": "   "}, None, "invalid_request"),
        ({"prompt": "hi"}, {"agentrt/idempotency_key": "k" * 201}, "invalid_request"),
        ({"prompt": "hi"}, {"agentrt/idempotency_key": 12}, "invalid_request"),
        ({"prompt": "hi"}, {"agentrt/idempotency_key": "a\x00b"}, "invalid_request"),
    ],
)
async def test_bad_input_is_invalid_params_and_starts_nothing(
    live: Live, arguments: dict[str, Any], meta: dict[str, Any] | None, kind: str
) -> None:
    secret = token(live, name("mcp-bad"), "runs:start", "runs:read", profiles=["typed"])
    async with mcp_client(live, secret) as client:
        error = await refusal(client, "typed", arguments, meta=meta)
    assert error.code == INVALID_PARAMS and error.data == {"type": kind}, error
    assert await runs_of(live, secret) == []


async def test_a_prompt_over_the_cap_or_the_body_limit_starts_nothing(
    client: TemporalClient, a2a_settings: ApiSettings
) -> None:
    capped = a2a_settings.replace(limits={"max_prompt_chars": CAP})  # body limit 64 000
    async with serving(client, capped) as live:
        secret = token(live, name("mcp-long"), "runs:start", "runs:read", profiles=["typed"])
        async with mcp_client(live, secret) as mcp:
            tools = {t.name: t for t in (await mcp.list_tools()).tools}
            assert tools["typed"].input_schema["properties"]["prompt"]["maxLength"] == CAP
            error = await refusal(mcp, "typed", {"prompt": "x" * (CAP + 1)})
            assert error.code == INVALID_PARAMS and error.data == {"type": "prompt_too_long"}
            assert "AGENTRT_MAX_PROMPT_CHARS" in error.message
            # Over the body limit: the transport refuses it (413) before any MCP handler.
            with pytest.raises(MCPError) as caught:
                await mcp.call_tool("typed", {"prompt": "x" * 70_000})
            assert not any(leak in caught.value.message for leak in LEAKS)
        assert await runs_of(live, secret) == []


async def test_the_status_tool_shows_only_the_principals_own_runs(live: Live) -> None:
    alice = token(live, name("mcp-own"), "runs:start", "runs:read", profiles=["helper"])
    bob = token(live, name("mcp-other"), "runs:start", "runs:read", profiles=["helper"])
    key = {"agentrt/idempotency_key": "shared-key"}
    async with mcp_client(live, alice) as client:
        mine = said(await client.call_tool("helper", {"prompt": REFUND}, meta=key))
    async with mcp_client(live, bob) as client:
        error = await refusal(client, STATUS_TOOL, {"run_id": mine["run_id"]})
        assert error.data == {"type": "run_not_found"}
        bad = await refusal(client, STATUS_TOOL, {"run_id": "'; DROP TABLE agent_run; --"})
        assert bad.data == {"type": "invalid_request"}
        # The same key from another principal names another run: keys are per principal.
        theirs = said(await client.call_tool("helper", {"prompt": REFUND}, meta=key))
    assert theirs["run_id"] != mine["run_id"]
    assert json.dumps(theirs).count("WAITING_FOR_APPROVAL") == 1
