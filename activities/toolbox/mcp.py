"""MCP tools as agentrt tools: `server.tool`, its schema and description from the server,
its effect from the annotations unless the config says otherwise.

Effects: `readOnlyHint` ⇒ READ_ONLY; else `idempotentHint` ⇒ IDEMPOTENT_WRITE; else a
NON_IDEMPOTENT_WRITE (fenced, approval-bound). A config `effects` entry wins;
`trust_annotations: false` makes every tool of the server a NON_IDEMPOTENT_WRITE (an entry in
`effects` still wins: it is the operator's word, not the server's).

Every write request carries the call's idempotency key in `_meta` under
IDEMPOTENCY_META_KEY, stable across retries of the same call, so a server can deduplicate.

Failures, as the activities see them:
- not reached (down, or the session cannot be reopened): ToolFailure, nothing was sent;
- an error result (`isError`) or a protocol error answer: ToolFailure with the server's text,
  except for a non-idempotent write whose servers-file entry does not say such an error
  means "not applied" (`errors_not_applied`): a plain error, its outcome unknown;
- sent and no answer (timeout, connection lost mid-call): a read or idempotent write is
  retried once on a fresh session (safe: it is a read, or the key deduplicates); a
  non-idempotent write raises a plain error, so the fence marks its outcome unknown.
"""

import json
import os
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from mcp.types import CallToolResult, TextContent
from mcp.types import Tool as McpToolSpec

from agentrt.activities.ports import Tool, ToolContext, ToolFailure, ToolInputError
from agentrt.activities.toolbox.mcp_config import McpConfig, McpServer
from agentrt.activities.toolbox.mcp_session import McpConnection, SentAndLost
from agentrt.contracts.enums import ToolEffect
from agentrt.contracts.errors import ConfigError
from agentrt.contracts.messages import ToolSpec
from agentrt.contracts.reconcile import APPLIED, NOT_APPLIED, Reconciled

IDEMPOTENCY_META_KEY = "agentrt/idempotency_key"
MAX_ERROR_CHARS = 2_000

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
    "null": (type(None),),
}


def effect_of(spec: McpToolSpec, server: McpServer) -> ToolEffect:
    override = server.effects.get(spec.name)
    if override is not None:
        return override
    hints = spec.annotations
    if not server.trust_annotations or hints is None:
        return ToolEffect.NON_IDEMPOTENT_WRITE
    if hints.read_only_hint is True:
        return ToolEffect.READ_ONLY
    if hints.idempotent_hint is True:
        return ToolEffect.IDEMPOTENT_WRITE
    return ToolEffect.NON_IDEMPOTENT_WRITE


def check_arguments(schema: dict[str, Any], arguments: dict[str, Any]) -> None:
    """Minimal, before anything is sent: required keys present, no unknown keys (unless the
    schema allows them), top-level JSON types. The server validates the rest."""
    props: dict[str, Any] = schema.get("properties") or {}
    problems = [f"{k}: field required" for k in schema.get("required") or [] if k not in arguments]
    if schema.get("additionalProperties") is not True:
        problems += [f"{k}: unexpected argument" for k in sorted(set(arguments) - set(props))]
    for key, value in arguments.items():
        declared = (props.get(key) or {}).get("type")
        kinds = [declared] if isinstance(declared, str) else declared or []
        allowed = tuple(t for k in kinds for t in _JSON_TYPES.get(k, (object,)))
        bad_bool = isinstance(value, bool) and bool not in allowed and object not in allowed
        if allowed and (not isinstance(value, allowed) or bad_bool):
            problems.append(f"{key}: expected {' or '.join(kinds)}")
    if problems:
        raise ToolInputError("; ".join(problems))


def result_text(result: CallToolResult) -> str:
    parts = [c.text for c in result.content if isinstance(c, TextContent)]
    if not parts and result.structured_content is not None:
        return json.dumps(result.structured_content)
    return "\n".join(parts)


class McpProbe:
    """A write's reconcile probe: a read tool of the same server (activities/ports.Probe).
    Called with `idempotency_key`, and the write's `arguments` when its schema declares
    that property; it answers a JSON object `{"status", "result"}`. An error answer, or no
    answer, raises (the activity retries); an answer that does not parse is "unknown"."""

    def __init__(self, conn: McpConnection, spec: McpToolSpec) -> None:
        self._conn = conn
        self._remote = spec.name
        self._takes_arguments = "arguments" in (spec.input_schema.get("properties") or {})
        self.__qualname__ = f"{conn.name}.{spec.name}"  # how a tool listing names it

    async def __call__(self, arguments: dict[str, Any], ctx: ToolContext) -> Reconciled:
        sent: dict[str, Any] = {"idempotency_key": ctx.idempotency_key}
        if self._takes_arguments:
            sent["arguments"] = arguments
        try:
            result = await self._conn.call(self._remote, sent, None)
        except SentAndLost as exc:
            raise RuntimeError(f"the probe {self.__qualname__} did not answer ({exc})") from None
        if result.is_error:
            raise RuntimeError(f"the probe {self.__qualname__} answered an error")
        return _verdict(result_text(result))


def _verdict(text: str) -> Reconciled:
    try:
        answer = json.loads(text)
    except ValueError:
        return Reconciled.unknown()
    status = answer.get("status") if isinstance(answer, dict) else None
    if status == APPLIED:
        result = answer.get("result")
        return Reconciled.applied(result if isinstance(result, str) else json.dumps(result))
    if status == NOT_APPLIED:
        return Reconciled.not_applied()
    return Reconciled.unknown()


class McpTool:
    """One MCP tool, satisfying the `Tool` port; `reconcile` is its probe, if any."""

    def __init__(
        self,
        conn: McpConnection,
        spec: McpToolSpec,
        effect: ToolEffect,
        *,
        not_applied_on_error: bool = False,
        probe: McpProbe | None = None,
        attempt_seconds: float | None = None,
    ) -> None:
        self._conn = conn
        self.attempt_seconds = attempt_seconds  # the servers file's bound on one attempt
        self._remote = spec.name
        self._schema = dict(spec.input_schema)
        self._effect = effect
        self._not_applied_on_error = not_applied_on_error
        self.reconcile = probe
        self._spec = ToolSpec(
            name=f"{conn.name}.{spec.name}",
            description=spec.description or spec.title or spec.name,
            parameters=self._schema,
            reconcile=probe.__qualname__ if probe is not None else None,
        )

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    @property
    def effect(self) -> ToolEffect:
        return self._effect

    async def __call__(self, arguments: dict[str, Any], ctx: ToolContext) -> str:
        check_arguments(self._schema, arguments)
        writes = self._effect is not ToolEffect.READ_ONLY
        meta = {IDEMPOTENCY_META_KEY: ctx.idempotency_key} if writes else None
        if self._effect is ToolEffect.NON_IDEMPOTENT_WRITE:
            await self._conn.probe()  # ToolFailure here: provably not sent
            try:
                result = await self._conn.call(self._remote, arguments, meta)
            except SentAndLost as exc:  # a plain error: the fence marks it unknown
                raise RuntimeError(f"MCP write sent, no answer ({exc})") from None
            except ToolFailure as exc:  # the server answered with a protocol error
                self._unknown_unless_configured(exc.reason)
                raise
        else:
            result = await self._retry_once(lambda: self._conn.call(self._remote, arguments, meta))
        if result.is_error:
            if self._effect is ToolEffect.NON_IDEMPOTENT_WRITE:
                self._unknown_unless_configured("error_result")
            text = result_text(result)[:MAX_ERROR_CHARS] or "the tool reported an error"
            raise ToolFailure(text, reason="error_result")
        return result_text(result)

    def _unknown_unless_configured(self, reason: str) -> None:
        """A write's error answer is "not applied" only where the servers file says so;
        otherwise the server may have acted before failing: a plain error, outcome unknown."""
        if not self._not_applied_on_error:
            raise RuntimeError(f"MCP write answered an error ({reason}); outcome unknown")

    async def _retry_once(self, send: Callable[[], Awaitable[CallToolResult]]) -> CallToolResult:
        try:
            return await send()
        except SentAndLost:
            pass
        await self._conn.client(fresh=True)
        try:
            return await send()
        except SentAndLost as exc:
            raise ToolFailure(
                f"the MCP server {self._conn.name!r} did not answer ({exc})", reason=str(exc)
            ) from None


Toolboxes = list[tuple[str, list[Tool]]]


async def open_mcp_toolboxes(
    config: McpConfig | None,
) -> tuple[Toolboxes, Callable[[], Awaitable[None]]]:
    """Connect to every configured server and list its tools: (server name, its tools) and
    an async closer. All or nothing: a server that cannot be listed, or an `effects` entry
    naming a tool the server does not have, is a ConfigError. (The worker opens its servers
    through mcp_servers.McpServers instead, where a server that is down is retried.)"""
    conns: list[McpConnection] = []

    async def close() -> None:
        for conn in conns:
            await conn.close()

    boxes: Toolboxes = []
    try:
        for server in config.servers if config is not None else []:
            conn = McpConnection(server, server.resolved(os.environ))
            conns.append(conn)
            try:
                specs = await conn.list_tools()
            except Exception as exc:
                raise ConfigError(
                    f"MCP server {server.name!r}: cannot list its tools at start "
                    f"({type(exc).__name__}: {exc})"
                ) from None
            boxes.append((server.name, tools_of(conn, server, specs)))
    except BaseException:
        await close()
        raise
    return boxes, close


def tools_of(conn: McpConnection, server: McpServer, specs: list[McpToolSpec]) -> list[Tool]:
    """The server's tools as configured; a name the entry gives that the server lacks, or
    a probe that is no read of a non-idempotent write, is a ConfigError."""
    by_name = {s.name: s for s in specs}
    unknown = sorted(server.named_tools() - set(by_name))
    if unknown:
        raise ConfigError(f"MCP server {server.name!r}: the file names unknown tool(s): {unknown}")
    effects = {s.name: effect_of(s, server) for s in specs}
    for bounded in server.attempt_seconds:
        if effects[bounded] is not ToolEffect.NON_IDEMPOTENT_WRITE:
            raise ConfigError(
                f"MCP server {server.name!r}: attempt_seconds {bounded!r}: only a "
                f"non-idempotent write takes an attempt bound (it is {effects[bounded].value})"
            )
    for write, read in server.reconcile.items():
        if effects[write] is not ToolEffect.NON_IDEMPOTENT_WRITE:
            raise ConfigError(
                f"MCP server {server.name!r}: reconcile {write!r}: only a non-idempotent "
                f"write is reconciled (it is {effects[write].value})"
            )
        if effects[read] is not ToolEffect.READ_ONLY:
            raise ConfigError(
                f"MCP server {server.name!r}: reconcile {write!r}: its probe {read!r} must be "
                f"READ_ONLY (it is {effects[read].value})"
            )
    return [
        McpTool(
            conn,
            s,
            effects[s.name],
            not_applied_on_error=server.error_not_applied(s.name),
            probe=McpProbe(conn, by_name[server.reconcile[s.name]])
            if s.name in server.reconcile
            else None,
            attempt_seconds=server.attempt_seconds.get(s.name),
        )
        for s in specs
    ]


def flatten(boxes: Sequence[tuple[str, Sequence[Tool]]]) -> list[Tool]:
    return [t for _, tools in boxes for t in tools]
