"""MCP servers as tool sources: the YAML file named by AGENTRT_MCP_SERVERS_FILE.

servers:
  - name: files                      # tools are named files.<tool>
    transport: stdio
    command: python
    args: [-m, my_mcp_server]
    env: {LOG_LEVEL: warning}
  - name: crm
    transport: http                  # streamable HTTP
    url: https://crm.internal/mcp
    headers_from_env: {Authorization: CRM_AUTHORIZATION}   # header -> env var name
    trust_annotations: false         # every tool a non-idempotent write
    effects: {search: READ_ONLY}     # per-tool override; wins over annotations
    timeout_seconds: 20
"""

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from agentrt.contracts.enums import ToolEffect
from agentrt.contracts.errors import ConfigError

SERVER_NAME = r"^[A-Za-z][A-Za-z0-9_-]{0,63}$"  # no '.': it separates server and tool


class _Server(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=SERVER_NAME)
    trust_annotations: bool = True
    effects: dict[str, ToolEffect] = Field(default_factory=dict)
    timeout_seconds: float = Field(default=30.0, gt=0, le=3600)


class StdioServer(_Server):
    transport: Literal["stdio"]
    command: str = Field(min_length=1)
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: Path | None = None


class HttpServer(_Server):
    transport: Literal["http"]
    url: str = Field(pattern=r"^https?://")
    headers_from_env: dict[str, str] = Field(default_factory=dict)

    def headers(self, environ: Mapping[str, str]) -> dict[str, str]:
        """Header values read from the environment; a variable that is not set is an error
        now, at start, rather than a 401 on the first call."""
        missing = sorted(v for v in self.headers_from_env.values() if v not in environ)
        if missing:
            raise ConfigError(
                f"MCP server {self.name!r}: header environment variable(s) not set: "
                + ", ".join(missing)
            )
        return {h: environ[v] for h, v in self.headers_from_env.items()}


ServerConfig = Annotated[StdioServer | HttpServer, Field(discriminator="transport")]


class McpConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    servers: list[ServerConfig] = Field(default_factory=list)

    @model_validator(mode="after")
    def _unique(self) -> "McpConfig":
        names = [s.name for s in self.servers]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"duplicate server name(s): {', '.join(dupes)}")
        return self


def load_mcp_config(path: Path, environ: Mapping[str, str] | None = None) -> McpConfig:
    """Parse and validate the file; resolve every header variable so a bad one fails here."""
    try:
        data = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise ConfigError(f"cannot read MCP servers file {path}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"MCP servers file {path} does not parse: {exc}") from None
    try:
        config = McpConfig.model_validate(data or {})
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'file'}: {e['msg']}" for e in exc.errors()
        )
        raise ConfigError(f"MCP servers file {path} is invalid: {problems}") from None
    env = os.environ if environ is None else environ
    for server in config.servers:
        if isinstance(server, HttpServer):
            server.headers(env)
    return config
