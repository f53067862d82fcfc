"""The settings of a process: the Temporal service and the run queue, the database and the
data directory, what a worker polls and loads, its telemetry, and (tests only) its fault
points. Each group reads its own `AGENTRT_*` variables (core/settings_base.py)."""

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import SettingsConfigDict

from agentrt.contracts.errors import ConfigError
from agentrt.contracts.ids import DEFAULT_TASK_QUEUE
from agentrt.core.settings_base import SettingsGroup, split_names, split_pairs
from agentrt.core.settings_doc import setting

DEFAULT_DATA_DIR = Path(".agentrt")
DEFAULT_POSTGRES_DSN = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
SERVE_ROLES = ("workflows", "models", "tools")
_WORKERS = Path(__file__).resolve().parent.parent / "workers"


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
    # The measured performance code (workers/fastpath.py); false runs the stock pieces.
    fast_paths: bool = Field(
        default=True, description="the store pool and workflow runner's fast paths"
    )
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
    policies_file: Path | None = Field(
        default=None,
        description="YAML: the approval policies (Cedar) profiles name as `name@version`",
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
    remote_agents_allowed_networks: str = Field(
        default="",
        description="CIDRs remote A2A agents may be reached at besides global unicast "
        "addresses (see Remote agents as tools)",
    )
    remote_agents_allowed_hosts: str = Field(
        default="",
        description="host names remote A2A agents may be reached at besides global unicast "
        "addresses",
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
        roles = set(split_names(self.serve))
        bad = [r for r in roles if r not in SERVE_ROLES and not r.startswith("toolbox:")]
        if bad or not roles:
            raise ConfigError(
                f"AGENTRT_SERVE: {bad or 'empty'}; use workflows, models, tools, toolbox:NAME"
            )
        return roles

    def toolbox_queue_map(self) -> dict[str, str]:
        return split_pairs(self.toolbox_queues, "AGENTRT_TOOLBOX_QUEUES")

    def rate_limits(self) -> dict[str, float]:
        limits: dict[str, float] = {}
        given = split_pairs(self.provider_rate_limits, "AGENTRT_PROVIDER_RATE_LIMITS")
        for name, raw in given.items():
            try:
                limits[name] = float(raw)
            except ValueError:
                limits[name] = 0.0
            if not limits[name] > 0:
                raise ConfigError(f"AGENTRT_PROVIDER_RATE_LIMITS: {name}={raw} is not positive")
        return limits


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
