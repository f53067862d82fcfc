"""The settings groups: one small model per concern, each reading its own `AGENTRT_*`
variables (and `.env`) when built without arguments.

The variable names are those of the flat settings before grouping, which deployments set:
a group's `env_prefix` names most of them (`AGENTRT_TEMPORAL_` + `address`), and a field
whose name was not its group's prefix plus its own carries the full old name as its alias
(`task_queue` in the Temporal group is `AGENTRT_TASK_QUEUE`). `env_name` tells which, and
the README's "Settings" table lists them all (tests/core/test_settings_env.py keeps both true).

A new field of a group is `AGENTRT_<GROUP PREFIX><FIELD>` without more ado: issue 28's
Temporal TLS settings go in `TemporalSettings` as `AGENTRT_TEMPORAL_TLS_...`.
"""

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from agentrt.contracts.errors import ConfigError
from agentrt.contracts.ids import DEFAULT_MAINTENANCE_QUEUE, DEFAULT_TASK_QUEUE
from agentrt.contracts.profiles import (
    DEFAULT_SEGMENT_ROUNDS,
    ITERATIONS_CEILING_LIMIT,
    MAX_ITERATIONS_CEILING,
)
from agentrt.contracts.run import DEFAULT_MAX_PROMPT_CHARS, PROMPT_CHARS_CEILING
from agentrt.core.settings_doc import setting

DEFAULT_DATA_DIR = Path(".agentrt")
DEFAULT_POSTGRES_DSN = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
SERVE_ROLES = ("workflows", "models", "tools")
_WORKERS = Path(__file__).resolve().parent.parent / "workers"


class SettingsGroup(BaseSettings):
    # Unknown AGENTRT_ variables are ignored, as they were before grouping. No
    # populate_by_name: with it, pydantic-settings would also read an aliased field under
    # its prefix and name (AGENTRT_URL for `database.url`), a variable that never existed.
    model_config = SettingsConfigDict(env_prefix="AGENTRT_", env_file=".env", extra="ignore")

    def __init__(self, **values: Any) -> None:
        """By field name: `TemporalSettings(task_queue="q")`; the rest from the environment."""
        super().__init__(**type(self).by_alias(values))

    @classmethod
    def by_alias(cls, values: Mapping[str, Any]) -> dict[str, Any]:
        """`values`, given by field name, keyed as validation expects: an aliased field by
        its alias. A name no field has is a mistake (extra="ignore" is for the environment);
        underscored ones are pydantic-settings' own (`_env_file=None`)."""
        out: dict[str, Any] = {}
        for key, value in values.items():
            field = cls.model_fields.get(key)
            if field is None and not key.startswith("_"):
                raise TypeError(f"{cls.__name__} has no setting {key}")
            alias = None if field is None else field.validation_alias
            out[alias if isinstance(alias, str) else key] = value
        return out


def env_name(group: type[SettingsGroup], field: str) -> str:
    """The environment variable that sets `field` of `group`."""
    alias = group.model_fields[field].validation_alias
    if isinstance(alias, str):
        return alias.upper()
    return f"{group.model_config.get('env_prefix', '')}{field}".upper()


def _pairs(raw: str, setting: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in (p.strip() for p in raw.split(",") if p.strip()):
        key, sep, value = part.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ConfigError(f"{setting}: bad entry {part!r} (want name=value)")
        out[key.strip()] = value.strip()
    return out


def _names(raw: str) -> list[str]:
    return [p.strip() for p in raw.split(",") if p.strip()]


class TemporalSettings(SettingsGroup):
    """Where the Temporal service is, and how runs are started on it."""

    model_config = SettingsConfigDict(env_prefix="AGENTRT_TEMPORAL_")

    address: str = Field(default="127.0.0.1:7233", description="the Temporal frontend")
    namespace: str = Field(default="default", description="the Temporal namespace runs live in")
    task_queue: str = Field(
        default=DEFAULT_TASK_QUEUE,
        validation_alias="AGENTRT_TASK_QUEUE",
        description="the runs' workflow queue",
    )
    start_timeout_seconds: float = Field(
        default=30.0,
        gt=0,
        validation_alias="AGENTRT_START_TIMEOUT_SECONDS",
        description="how long `start` waits for a worker to begin the run",
    )
    # Reaching a Temporal that is not a laptop's (core/temporal_tls.py reads and checks
    # these at start): each PEM setting is a file path or the PEM text itself.
    tls: bool = Field(
        default=False, description="TLS with the system's roots; implied by any TLS setting"
    )
    tls_ca: str = Field(default="", description="the server's CA: path or PEM")
    tls_server_name: str = Field(default="", description="the name the server certificate has")
    tls_cert: str = Field(default="", description="mTLS client certificate: path or PEM")
    tls_key: SecretStr | None = Field(default=None, description="its private key: path or PEM")
    api_key: SecretStr | None = Field(default=None, description="Temporal Cloud API key")
    # Worker versioning (README "Upgrading workers"): both or neither.
    deployment_name: str = Field(
        default="",
        validation_alias="AGENTRT_DEPLOYMENT_NAME",
        description=(
            "worker versioning, with `AGENTRT_BUILD_ID`: both or neither (see Upgrading workers)"
        ),
    )
    build_id: str = Field(
        default="",
        validation_alias="AGENTRT_BUILD_ID",
        description="the worker's build id under that deployment",
    )

    def deployment_version(self) -> tuple[str, str] | None:
        """(deployment name, build id) when worker versioning is configured."""
        name, build = self.deployment_name.strip(), self.build_id.strip()
        if name and not build:
            raise ConfigError("AGENTRT_DEPLOYMENT_NAME is set without AGENTRT_BUILD_ID")
        if build and not name:
            raise ConfigError("AGENTRT_BUILD_ID is set without AGENTRT_DEPLOYMENT_NAME")
        return (name, build) if name else None


class DatabaseSettings(SettingsGroup):
    """The runtime's database, and the directory its local files live in."""

    data_dir: Path = Field(
        default=DEFAULT_DATA_DIR,
        description=(
            "embedded database, dev-server state, generated seal key (and, from `agentrt "
            "demo`, payload key)"
        ),
    )
    url: str = Field(
        default="",
        validation_alias="AGENTRT_DATABASE_URL",
        description="e.g. `postgresql+psycopg://postgres@127.0.0.1:5432/test`",
        json_schema_extra={"shown_default": "SQLite under `AGENTRT_DATA_DIR`"},
    )
    postgres_dsn: str = Field(
        default=DEFAULT_POSTGRES_DSN,
        description="the PostgreSQL the tests and benchmarks make scratch schemas in",
    )

    def resolved_url(self) -> str:
        if self.url:
            return self.url
        return f"sqlite:///{(self.data_dir / 'agentrt.db').resolve()}"


class WorkerSettings(SettingsGroup):
    """What a worker process polls, how much at once, and what it loads."""

    # What this worker polls: "workflows" (task_queue), "models", "tools", "toolbox:NAME".
    serve: str = Field(
        default="workflows,models,tools",
        description="what this worker polls; also `toolbox:NAME` (see Routing and limits)",
    )
    max_concurrent_activities: int = Field(default=100, description="worker concurrency")
    max_concurrent_workflow_tasks: int = Field(default=100, description="worker concurrency")
    model_concurrency: int = setting(
        0,
        "per-queue worker concurrency of model calls",
        shown="`AGENTRT_MAX_CONCURRENT_ACTIVITIES`",
    )  # 0: max_concurrent_activities
    tool_concurrency: int = setting(
        0, "per-queue worker concurrency of tool calls", shown="`AGENTRT_MAX_CONCURRENT_ACTIVITIES`"
    )
    graceful_shutdown_seconds: float = Field(default=30.0, description="drain time on SIGTERM")
    # Routing (README "Operating"): model calls of provider P run on "<model_task_queue>-P",
    # tool calls on tool_task_queue, a toolbox's tools on its own queue (box=queue,...).
    model_task_queue: str = Field(default="", description="model calls on `<queue>-<provider>`")
    tool_task_queue: str = Field(default="", description="tool calls on their own queue")
    toolbox_queues: str = Field(
        default="", description="`box=queue,…`: a toolbox's calls only on that queue"
    )
    provider_rate_limits: str = Field(
        default="", description="`provider=requests/s,…`: fleet-wide, on the provider's model queue"
    )
    profiles_file: Path = setting(
        _WORKERS / "profiles.yaml",
        (
            "agent profiles the worker serves (unless given in code); clients and the API"
            " read the workers' registration instead"
        ),
        shown="`workers/profiles.yaml`",
    )
    mcp_servers_file: Path | None = Field(
        default=None, description="YAML: MCP servers whose tools the worker offers (see Extending)"
    )
    mcp_retry_max_seconds: float = Field(
        default=30.0,
        gt=0,
        description="an MCP server down at start is listed again, waiting twice as long "
        "each time up to this; its tools are offered once it answers",
    )
    toolboxes: str = Field(
        default="",
        description=(
            "`pkg.module:attr,…`: `Toolbox` objects the worker loads (besides the "
            "`agentrt.toolboxes` entry points)"
        ),
    )
    toolbox_entry_points: bool = Field(
        default=True, description="also load the `agentrt.toolboxes` entry-point group"
    )

    def serves(self) -> set[str]:
        roles = set(_names(self.serve))
        bad = [r for r in roles if r not in SERVE_ROLES and not r.startswith("toolbox:")]
        if bad or not roles:
            raise ConfigError(
                f"AGENTRT_SERVE: {bad or 'empty'}; use workflows, models, tools, toolbox:NAME"
            )
        return roles

    def toolbox_queue_map(self) -> dict[str, str]:
        return _pairs(self.toolbox_queues, "AGENTRT_TOOLBOX_QUEUES")

    def rate_limits(self) -> dict[str, float]:
        limits: dict[str, float] = {}
        for name, raw in _pairs(self.provider_rate_limits, "AGENTRT_PROVIDER_RATE_LIMITS").items():
            try:
                limits[name] = float(raw)
            except ValueError:
                limits[name] = 0.0
            if not limits[name] > 0:
                raise ConfigError(f"AGENTRT_PROVIDER_RATE_LIMITS: {name}={raw} is not positive")
        return limits


class ProviderSettings(SettingsGroup):
    """The model providers a worker serves."""

    file: Path | None = Field(
        default=None,
        validation_alias="AGENTRT_PROVIDERS_FILE",
        description=(
            "YAML/JSON: OpenAI-compatible, Anthropic and Gemini endpoints, prices, answer"
            " levels, plug-in options (below)"
        ),
    )
    openai_base_url: str = Field(
        default="https://api.openai.com/v1", description="where `openai:<model>` calls go"
    )
    openai_api_key: SecretStr | None = Field(
        default=None, description="enables `openai:<model>` profiles"
    )
    scripted_providers: str = Field(
        default="scripted", description="provider names served by the scripted model"
    )
    rules_file: Path = setting(
        _WORKERS / "demo_rules.yaml", "scripted model rules", shown="`workers/demo_rules.yaml`"
    )
    scripted_pace_ms: float | None = Field(
        default=None,
        ge=0,
        description="stream the scripted model's replies a word at a time, this many ms apart",
    )
    provider_answer_levels: str = setting(
        "",
        "`provider=level,…`: what of a provider's output may be kept",
        shown="unset (all `full`)",
    )

    def answer_levels(self) -> dict[str, str]:
        levels: dict[str, str] = {}
        for part in _names(self.provider_answer_levels):
            name, sep, level = part.partition("=")
            if not sep or level not in ("full", "redacted", "metadata", "none"):
                raise ValueError(f"AGENTRT_PROVIDER_ANSWER_LEVELS: bad entry {part!r}")
            levels[name.strip()] = level
        return levels


class PrivacySettings(SettingsGroup):
    """The keys that seal data at rest and encrypt Temporal payloads. The key files under
    the data directory are read by `Settings` (core/settings.py), which knows both."""

    seal_keys: SecretStr | None = setting(
        None, "`kid:base64key[,kid:base64key]`, first is active", shown="generated per installation"
    )
    payload_keys: SecretStr | None = setting(
        None,
        "`kid:base64key[,…]`: encrypt every Temporal payload (AES-256-GCM); without it, a "
        "`payload.key` under the data directory is used when present",
        shown="unset (`agentrt demo`: generated, `payload.key` under `AGENTRT_DATA_DIR`)",
    )
    allow_plaintext_history: bool = Field(
        default=False,
        description=(
            "let a profile below privacy `full` start from a client without payload keys "
            "(its prompt then stays in Temporal history in the clear)"
        ),
    )


class CodecSettings(SettingsGroup):
    """The codec server (`agentrt codec-server`), through which Temporal Web decrypts."""

    model_config = SettingsConfigDict(env_prefix="AGENTRT_CODEC_")

    ui_origins: str = Field(
        default="http://127.0.0.1:8233,http://localhost:8233",
        description="Web UI origins the codec server admits",
    )
    token: SecretStr | None = Field(
        default=None,
        description=(
            "bearer token every `/decode` and `/encode` request must carry; "
            "`codec-server` refuses to start without it unless given `--dev-no-token`"
        ),
    )
    allowed_hosts: str = setting(
        "",
        (
            "`host,…`: Host header names the codec server answers besides `127.0.0.1`, "
            "`localhost`, `::1`"
        ),
        shown="unset (loopback names only)",
    )

    def origins(self) -> list[str]:
        return _names(self.ui_origins)

    def hosts(self) -> list[str]:
        return _names(self.allowed_hosts)


class RetentionSettings(SettingsGroup):
    """Retention (`agentrt schedules apply`): purge settled runs after N days; cancel, then
    purge, runs still waiting after M days; one pass every `every_hours`."""

    model_config = SettingsConfigDict(env_prefix="AGENTRT_RETENTION_")

    finished_days: float = Field(
        default=30.0, description="purge settled runs after this many days"
    )
    waiting_days: float = Field(
        default=14.0, description="cancel, then purge, runs still waiting after this many days"
    )
    every_hours: float = Field(default=24.0, description="one retention pass this often")
    task_queue: str = Field(
        default=DEFAULT_MAINTENANCE_QUEUE,
        validation_alias="AGENTRT_MAINTENANCE_TASK_QUEUE",
        description="where the retention pass runs",
    )


class TelemetrySettings(SettingsGroup):
    """Metrics, traces and logs (core/metrics.py, core/tracing.py, core/logs.py); all off
    unless set."""

    metrics_host: str = Field(default="127.0.0.1", description="the address `/metrics` binds")
    metrics_port: int | None = setting(
        None,
        "Prometheus `/metrics` of the worker / `agentrt-api serve` (see Observability)",
        shown="off", ge=0, le=65535,
    )  # fmt: skip
    temporal_metrics_port: int | None = setting(
        None, "the Temporal SDK's own Prometheus exporter, on the same host",
        shown="off", ge=0, le=65535,
    )  # fmt: skip
    otlp_endpoint: str = setting(
        "",
        "export traces over OTLP/HTTP, e.g. `http://127.0.0.1:4318` (`/v1/traces` is added)",
        shown="off",
    )
    log_format: Literal["text", "json"] = Field(
        default="text", description="`json`: one JSON object a line (worker, API, CLI)"
    )


class LimitSettings(SettingsGroup):
    """Input caps (issue 25), at every door a prompt comes in by; how long a run may be."""

    max_prompt_chars: int = Field(
        default=DEFAULT_MAX_PROMPT_CHARS,
        gt=0,
        le=PROMPT_CHARS_CEILING,
        description=(
            "a longer prompt or A2A message is refused before anything is created (at most 1000000)"
        ),
    )
    max_part_chars: int = Field(
        default=DEFAULT_MAX_PROMPT_CHARS,
        gt=0,
        le=PROMPT_CHARS_CEILING,
        description="a longer text part of an A2A message is refused (at most 1000000)",
    )
    # The design bounds a run at 20 rounds; an installation raises it explicitly, on its
    # clients (a start asking for more is refused) and its workers (which refuse a profile
    # over it at start, and a start that came around the clients).
    max_iterations_ceiling: int = Field(
        default=MAX_ITERATIONS_CEILING,
        ge=1,
        le=ITERATIONS_CEILING_LIMIT,
        description=(
            "the most rounds a profile or a start may ask for; raise it explicitly for long "
            "runs (at most 10000)"
        ),
    )
    segment_rounds: int = Field(
        default=DEFAULT_SEGMENT_ROUNDS,
        ge=1,
        le=ITERATIONS_CEILING_LIMIT,
        description=(
            "a run continues as new after this many rounds, so each Temporal history stays "
            "bounded (workers)"
        ),
    )


class FaultSettings(SettingsGroup):
    """Test-only: block (or crash) at a named fault point; see workers/faults.py."""

    model_config = SettingsConfigDict(env_prefix="AGENTRT_FAULT_")

    block_at: str = Field(
        default="",
        description=(
            "tests only: `point,…` where the worker parks for good (to be SIGKILLed there)"
        ),
    )
    fail_at: str = Field(
        default="", description="tests only: `point,…` where the call fails with an injected fault"
    )
    marker_dir: Path | None = Field(
        default=None,
        description="tests only: where a blocking point leaves a file saying it got there",
    )
