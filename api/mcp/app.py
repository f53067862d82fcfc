"""The MCP server at `/mcp` (streamable HTTP, the official `mcp` package's low-level
server and session manager): each published profile a token may start is a tool, and a
call starts a run as the token's principal (api/mcp/calls.py).

Authentication is the operator API's: `Authorization: Bearer <operator token>`, checked
on every request (no token, or a revoked or expired one: 401 before the MCP layer). A
session is bound to the token that opened it: another token naming it is answered as if
it did not exist (the SDK's session owners). A token without `runs:start` lists no tool
and starts nothing."""

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
)
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from agentrt.api.grants import Grants, refusal
from agentrt.api.mcp import calls
from agentrt.api.mcp.errors import logger, mcp_error, refused
from agentrt.api.mcp.tools import STATUS_TOOL, offered, output_schema, profile_tool, status_tool
from agentrt.api.operator.auth import START, Principal, principal_of
from agentrt.api.operator.errors import OUTAGE_MESSAGE
from agentrt.api.operator.state import OpsState
from agentrt.api.settings import ApiSettings
from agentrt.contracts.registered import RegisteredProfile
from agentrt.store.db.engine import DATABASE_ERRORS, database_reason

MCP_PATH = "/mcp"
_PRINCIPAL = "agentrt_principal"
MAX_TOOL_NAME = 200


class McpEndpoint:
    """The `/mcp` route: authenticates, then hands the request to the session manager."""

    def __init__(
        self, settings: ApiSettings, ops: OpsState, *, wait: float = calls.CALL_WAIT_SECONDS
    ) -> None:
        self._ops, self._base = ops, settings.api.url()
        self._wait = wait
        server: Server[Any] = Server(
            "agentrt",
            version="1",
            instructions="Each tool is an agentrt agent: a call starts a durable run. A run "
            f"that waits for a person answers its status; {STATUS_TOOL} asks again.",
            # Our input schemas mirror no argument into an Mcp-Param header: nothing to
            # check, so a 2026-07-28 call does not list the tools (a registry read) first.
            get_tool_input_schema=lambda _name: None,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )
        self.sessions = StreamableHTTPSessionManager(
            app=server, max_request_body_size=settings.api.max_body_bytes
        )

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with self.sessions.run():
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        header = dict(scope.get("headers", [])).get(b"authorization", b"").decode("latin-1")
        scheme, _, secret = header.partition(" ")
        who = None
        if scheme.lower() == "bearer" and secret.strip():
            try:
                who = await self._principal(secret.strip())
            except DATABASE_ERRORS as exc:  # the token cannot be checked now: try again
                logger.warning("store_unavailable: %s", database_reason(exc))
                await _refused(send, 503, "store_unavailable", OUTAGE_MESSAGE["store_unavailable"])
                return
        if who is None:
            await _refused(send, 401, "unauthorized", "a valid bearer operator token is required")
            return
        # A dict of this request's own: the server's may be shared between requests.
        scope["state"] = {**scope.get("state", {}), _PRINCIPAL: who}
        # The SDK binds a session to its creator's identity: the token's, not only its name.
        access = AccessToken(
            token="-", client_id=who.name, subject=who.token_id, scopes=sorted(who.scopes)
        )
        scope["user"] = AuthenticatedUser(access)
        await self.sessions.handle_request(scope, receive, send)

    async def _principal(self, secret: str) -> Principal | None:
        token = await self._ops.on_start_lane(self._ops.principals.authenticate, secret)
        return None if token is None else principal_of(token)

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], _params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        who = _who(ctx)
        try:
            served = await asyncio.to_thread(self._ops.profiles.all)
        except Exception as exc:
            raise mcp_error(exc) from None
        mine = offered(served, who.grants if who.has(START) else None)
        cap = self._ops.require_runtime().max_prompt_chars
        return ListToolsResult(
            tools=[*(profile_tool(p, cap) for p in mine.values()), status_tool()]
        )

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: CallToolRequestParams
    ) -> CallToolResult:
        who = _who(ctx)
        arguments = params.arguments or {}
        try:
            if params.name == STATUS_TOOL:
                return await calls.status_of(self._ops, who, arguments, self._base)
            profile = await self._startable(who, params.name)
            session = ctx.request.headers.get("mcp-session-id") if ctx.request else None
            key = calls.call_key(params.meta, session, ctx.request_id)
            body = calls.start_request(self._ops, who, profile.name, arguments, key)
            return await calls.start_and_wait(
                self._ops, who, body, base_url=self._base, wait=self._wait,
                typed=output_schema(profile) is not None,
            )  # fmt: skip
        except Exception as exc:
            raise mcp_error(exc) from None

    async def _startable(self, who: Principal, name: str) -> RegisteredProfile:
        """The profile of tool `name`, refused before anything is written when it is no
        tool of this server or the token may not start it."""
        shown = name if len(name) <= MAX_TOOL_NAME else name[:MAX_TOOL_NAME] + "..."
        profile = None
        if len(name) <= MAX_TOOL_NAME:
            found = await self._ops.on_start_lane(self._ops.profiles.get, name)
            profile = offered({name: found}, Grants(everything=True)).get(name) if found else None
        if profile is None:
            raise refused("unknown_tool", f"unknown tool {shown!r}: tools/list names the tools")
        if not who.has(START):
            raise refused("forbidden", f"the token of {who.name} lacks the scope {START}")
        if not who.grants.allows(profile):
            raise refused("profile_not_granted", refusal(who.name, profile))
        return profile


def _who(ctx: ServerRequestContext[Any]) -> Principal:
    request = ctx.request
    assert isinstance(request, Request)  # the /mcp route always sets it
    who = getattr(request.state, _PRINCIPAL, None)
    assert isinstance(who, Principal)
    return who


async def _refused(send: Send, status: int, type_: str, message: str) -> None:
    """A refusal before the MCP layer, in the operator API's error shape."""
    raw = json.dumps({"error": {"type": type_, "message": message}}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(raw))]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="agentrt"'))
    elif status == 503:
        headers.append((b"retry-after", b"1"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": raw})
