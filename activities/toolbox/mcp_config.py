"""MCP servers as tool sources: the YAML file named by AGENTRT_MCP_SERVERS_FILE.

servers:
  - name: files                      # tools are named files.<tool>
    transport: stdio
    command: python
    args: [-m, my_mcp_server]
    env: {LOG_LEVEL: warning}
    env_from_env: {FILES_TOKEN: AGENTRT_FILES_TOKEN}   # child variable -> this process's
  - name: crm
    transport: http                  # streamable HTTP
    url: https://crm.internal/mcp
    headers_from_env: {Authorization: CRM_AUTHORIZATION}   # header -> env var name
    trust_annotations: false         # every tool a non-idempotent write
    effects: {search: READ_ONLY}     # per-tool override; wins over annotations
    timeout_seconds: 20
    errors_not_applied: [refund]     # or true: an error answer of these writes changed nothing
    reconcile: {refund: refund_status}   # write tool -> its probe, a read tool of this server
    attempt_seconds: {refund: 5}     # a write's own attempt bound (see below)

A non-idempotent write that answers with an error (an `isError` result, or a protocol
error) leaves its outcome unknown unless `errors_not_applied` says that, on this server,
such an error means nothing changed. A probe (activities/toolbox/mcp.py McpProbe) is
called with `idempotency_key` (and the write's `arguments`, if its schema takes them) and
answers `{"status": "applied" | "not_applied" | "unknown", "result": "..."}`.

`attempt_seconds` declares, per non-idempotent write, that the server applies nothing of a
call past that many seconds after it was sent (its own deadline): the write activity cuts
the call there, and an interrupted write's probe is asked once the bound has passed rather
than after the profile's `write_seconds` (activities/ports.attempt_bound_of).
"""

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, SecretStr, model_validator

from agentrt.activities.toolbox.remote_config import RemoteAgent
from agentrt.contracts.enums import ToolEffect
from agentrt.contracts.errors import ConfigError
from agentrt.contracts.held import EntryKind
from agentrt.contracts.plan import MAX_ATTEMPT_SECONDS
from agentrt.contracts.strict import Strict
from agentrt.core.yaml_file import load_yaml

SERVER_NAME = r"^[A-Za-z][A-Za-z0-9_-]{0,63}$"  # no '.': it separates server and tool
_STDIO_ONLY = ("args", "env", "env_from_env", "cwd")
_HTTP_ONLY = ("headers", "headers_from_env")


class McpServer(Strict):
    """An MCP server, a toolbox of its name (its tools are `<name>.<tool>`): a stdio child
    (`command`) or a streamable-HTTP endpoint (`url`). Written in Python and held by a
    profile, `Profile(tools=[McpServer(name="crm", url="https://crm.internal/mcp",
    headers_from_env={"Authorization": "CRM_AUTHORIZATION"})])`, or as an entry of the
    servers file (AGENTRT_MCP_SERVERS_FILE), which loads onto this type.

    Secrets stay out of the definition: `headers_from_env` and `env_from_env` name
    variables of the worker's environment, read when it starts (one not set is a
    ConfigError then); `headers` takes secret values given in code (never shown)."""

    name: str = Field(pattern=SERVER_NAME)
    # Inferred from `command` / `url`; the file may say it (and must then agree).
    transport: Literal["stdio", "http"] | None = None
    command: str | None = Field(default=None, min_length=1)
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    # The child's variables taken from this process's environment (a token, say), so no
    # secret need be written in the file: child variable -> variable here. The child
    # inherits nothing else but the MCP SDK's default few (PATH, HOME, ...).
    env_from_env: dict[str, str] = Field(default_factory=dict)
    cwd: Path | None = None
    url: str | None = Field(default=None, pattern=r"^https?://")
    headers: dict[str, SecretStr] = Field(default_factory=dict)
    headers_from_env: dict[str, str] = Field(default_factory=dict)  # header -> env var name
    trust_annotations: bool = True  # false: every tool a non-idempotent write
    effects: dict[str, ToolEffect] = Field(default_factory=dict)  # wins over annotations
    timeout_seconds: float = Field(default=30.0, gt=0, le=3600)
    errors_not_applied: bool | list[str] = False
    reconcile: dict[str, str] = Field(default_factory=dict)  # write tool -> its probe
    attempt_seconds: dict[str, Annotated[float, Field(gt=0, le=MAX_ATTEMPT_SECONDS)]] = Field(
        default_factory=dict
    )

    @model_validator(mode="after")
    def _one_transport(self) -> "McpServer":
        if (self.command is None) == (self.url is None):
            raise ValueError("an MCP server has either a command (stdio) or a url (http)")
        transport: Literal["stdio", "http"] = "stdio" if self.command is not None else "http"
        if self.transport not in (None, transport):
            raise ValueError(f"transport {self.transport} with a {transport} server's fields")
        other = _HTTP_ONLY if transport == "stdio" else _STDIO_ONLY
        stray = [f for f in other if getattr(self, f)]
        if stray:
            raise ValueError(f"a {transport} server takes no {', '.join(stray)}")
        for given, read in (("env", "env_from_env"), ("headers", "headers_from_env")):
            both = sorted(set(getattr(self, given)) & set(getattr(self, read)))
            if both:
                raise ValueError(f"set in both {given} and {read}: {', '.join(both)}")
        self.transport = transport
        return self

    def profile_entry(self) -> tuple[EntryKind, str]:
        """Held by a profile: the toolbox of its name."""
        return "toolbox", self.name

    @property
    def where(self) -> str:
        """Its command or URL, for the worker's `--check` lines."""
        return self.command or self.url or ""

    def error_not_applied(self, tool: str) -> bool:
        """Whether an error answer of `tool` means, by this file, that nothing changed."""
        if isinstance(self.errors_not_applied, bool):
            return self.errors_not_applied
        return tool in self.errors_not_applied

    def named_tools(self) -> set[str]:
        """Every tool this entry names, each to be checked against the server's list."""
        listed = [] if isinstance(self.errors_not_applied, bool) else self.errors_not_applied
        return {
            *self.effects, *listed, *self.reconcile, *self.reconcile.values(),
            *self.attempt_seconds,
        }  # fmt: skip

    def resolved(self, environ: Mapping[str, str]) -> dict[str, str]:
        """What this server takes from the environment: a stdio child's whole environment
        (`env` and `env_from_env`), an HTTP server's headers (`headers` and
        `headers_from_env`). A variable that is not set is a ConfigError."""
        if self.transport == "stdio":
            return {**self.env, **_from_env(self.name, "child", self.env_from_env, environ)}
        given = {k: v.get_secret_value() for k, v in self.headers.items()}
        return {**given, **_from_env(self.name, "header", self.headers_from_env, environ)}


def _from_env(
    server: str, what: str, wanted: Mapping[str, str], environ: Mapping[str, str]
) -> dict[str, str]:
    """Values read from the environment; a variable that is not set is an error now, at
    start, rather than a failure on the first call."""
    missing = sorted(v for v in wanted.values() if v not in environ)
    if missing:
        raise ConfigError(
            f"MCP server {server!r}: {what} environment variable(s) not set: " + ", ".join(missing)
        )
    return {k: environ[v] for k, v in wanted.items()}


class McpConfig(Strict):
    """The servers file: its MCP servers and its remote A2A agents (remote_config.py),
    each name once (each is a toolbox of its name)."""

    servers: list[McpServer] = Field(default_factory=list)
    remote_agents: list[RemoteAgent] = Field(default_factory=list)

    @model_validator(mode="after")
    def _unique(self) -> "McpConfig":
        names = [s.name for s in self.servers] + [a.name for a in self.remote_agents]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"duplicate server name(s): {', '.join(dupes)}")
        return self


def load_mcp_config(path: Path, environ: Mapping[str, str] | None = None) -> McpConfig:
    """Parse and validate the file; resolve every header and child variable so a bad one
    fails here."""
    config = load_yaml(path, McpConfig, "MCP servers file")
    env = os.environ if environ is None else environ
    for server in config.servers:
        server.resolved(env)
    for agent in config.remote_agents:
        agent.token(env)
    return config
