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
from agentrt.contracts.run import DEFAULT_MAX_PROMPT_CHARS, PROMPT_CHARS_CEILING

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

    address: str = "127.0.0.1:7233"
    namespace: str = "default"
    task_queue: str = Field(default=DEFAULT_TASK_QUEUE, validation_alias="AGENTRT_TASK_QUEUE")
    start_timeout_seconds: float = Field(
        default=30.0,
        gt=0,
        validation_alias="AGENTRT_START_TIMEOUT_SECONDS",
        description="how long a start waits for a worker to begin the run",
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
    deployment_name: str = Field(default="", validation_alias="AGENTRT_DEPLOYMENT_NAME")
    build_id: str = Field(default="", validation_alias="AGENTRT_BUILD_ID")

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
        default=DEFAULT_DATA_DIR, description="SQLite database and generated key files"
    )
    url: str = Field(
        default="",
        validation_alias="AGENTRT_DATABASE_URL",
        description="SQLAlchemy URL; empty means SQLite under data_dir.",
    )
    postgres_dsn: str = DEFAULT_POSTGRES_DSN

    def resolved_url(self) -> str:
        if self.url:
            return self.url
        return f"sqlite:///{(self.data_dir / 'agentrt.db').resolve()}"


class WorkerSettings(SettingsGroup):
    """What a worker process polls, how much at once, and what it loads."""

    # What this worker polls: "workflows" (task_queue), "models", "tools", "toolbox:NAME".
    serve: str = "workflows,models,tools"
    max_concurrent_activities: int = 100
    max_concurrent_workflow_tasks: int = 100
    model_concurrency: int = 0  # 0: max_concurrent_activities
    tool_concurrency: int = 0
    graceful_shutdown_seconds: float = 30.0
    # Routing (README "Operating"): model calls of provider P run on "<model_task_queue>-P",
    # tool calls on tool_task_queue, a toolbox's tools on its own queue (box=queue,...).
    model_task_queue: str = ""
    tool_task_queue: str = ""
    toolbox_queues: str = ""
    provider_rate_limits: str = Field(
        default="", description="provider=requests/s,...: fleet-wide, on the provider's queue"
    )
    profiles_file: Path = _WORKERS / "profiles.yaml"
    mcp_servers_file: Path | None = Field(
        default=None, description="YAML file of MCP servers whose tools the worker offers"
    )
    toolboxes: str = Field(
        default="", description="pkg.module:attr,...: Toolbox objects the worker loads"
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
        description="YAML: OpenAI-compatible endpoints, prices, answer levels, plug-in options",
    )
    openai_base_url: str = "https://api.openai.com/v1"
    openai_api_key: SecretStr | None = None
    scripted_providers: str = Field(
        default="scripted", description="names served by the scripted model (same rules file)"
    )
    rules_file: Path = _WORKERS / "demo_rules.yaml"
    scripted_pace_ms: float | None = Field(
        default=None,
        ge=0,
        description="stream the scripted model's replies a word at a time, this many ms apart",
    )
    provider_answer_levels: str = Field(
        default="", description="provider=level,...: what of a provider's output may be kept"
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

    seal_keys: SecretStr | None = Field(
        default=None, description="kid:base64key[,kid:base64key]; first is active."
    )
    payload_keys: SecretStr | None = Field(
        default=None,
        description="kid:base64key[,...]: encrypt Temporal payloads (first key active).",
    )
    allow_plaintext_history: bool = Field(
        default=False,
        description="let profiles below privacy full start without payload keys",
    )


class CodecSettings(SettingsGroup):
    """The codec server (`agentrt codec-server`), through which Temporal Web decrypts."""

    model_config = SettingsConfigDict(env_prefix="AGENTRT_CODEC_")

    ui_origins: str = "http://127.0.0.1:8233,http://localhost:8233"
    token: SecretStr | None = Field(
        default=None, description="bearer token every codec-server request must present"
    )
    allowed_hosts: str = Field(
        default="",
        description="host names the codec server answers besides loopback (DNS rebinding)",
    )

    def origins(self) -> list[str]:
        return _names(self.ui_origins)

    def hosts(self) -> list[str]:
        return _names(self.allowed_hosts)


class RetentionSettings(SettingsGroup):
    """Retention (`agentrt schedules apply`): purge settled runs after N days; cancel, then
    purge, runs still waiting after M days; one pass every `every_hours`."""

    model_config = SettingsConfigDict(env_prefix="AGENTRT_RETENTION_")

    finished_days: float = 30.0
    waiting_days: float = 14.0
    every_hours: float = 24.0
    task_queue: str = Field(
        default=DEFAULT_MAINTENANCE_QUEUE, validation_alias="AGENTRT_MAINTENANCE_TASK_QUEUE"
    )


class TelemetrySettings(SettingsGroup):
    """Metrics, traces and logs (core/metrics.py, core/tracing.py, core/logs.py); all off
    unless set."""

    metrics_host: str = "127.0.0.1"
    metrics_port: int | None = Field(default=None, ge=0, le=65535, description="/metrics")
    temporal_metrics_port: int | None = Field(
        default=None, ge=0, le=65535, description="the Temporal SDK's own Prometheus exporter"
    )
    otlp_endpoint: str = Field(default="", description="OTLP/HTTP traces, e.g. http://h:4318")
    log_format: Literal["text", "json"] = "text"


class LimitSettings(SettingsGroup):
    """Input caps (issue 25), at every door a prompt comes in by."""

    max_prompt_chars: int = Field(
        default=DEFAULT_MAX_PROMPT_CHARS,
        gt=0,
        le=PROMPT_CHARS_CEILING,
        description="a prompt or follow-up message longer is refused before anything starts",
    )
    max_part_chars: int = Field(
        default=DEFAULT_MAX_PROMPT_CHARS,
        gt=0,
        le=PROMPT_CHARS_CEILING,
        description="each text part of an A2A message; longer is refused",
    )


class FaultSettings(SettingsGroup):
    """Test-only: block (or crash) at a named fault point; see workers/faults.py."""

    model_config = SettingsConfigDict(env_prefix="AGENTRT_FAULT_")

    block_at: str = ""
    fail_at: str = ""
    marker_dir: Path | None = None
