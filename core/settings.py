"""Settings, read only in entry points (worker, CLI, API, Alembic env) and passed down."""

import base64
import os
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from agentrt.contracts.errors import ConfigError
from agentrt.contracts.ids import DEFAULT_MAINTENANCE_QUEUE, DEFAULT_TASK_QUEUE
from agentrt.contracts.run import DEFAULT_MAX_PROMPT_CHARS, PROMPT_CHARS_CEILING
from agentrt.core.private import FILE_MODE, private_dir, tighten

DEFAULT_DATA_DIR = Path(".agentrt")
DEFAULT_POSTGRES_DSN = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


SERVE_ROLES = ("workflows", "models", "tools")


def _pairs(raw: str, setting: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in (p.strip() for p in raw.split(",") if p.strip()):
        key, sep, value = part.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ConfigError(f"{setting}: bad entry {part!r} (want name=value)")
        out[key.strip()] = value.strip()
    return out


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="AGENTRT_", env_file=".env", extra="ignore")

    data_dir: Path = DEFAULT_DATA_DIR
    database_url: str = Field(
        default="", description="SQLAlchemy URL; empty means SQLite under data_dir."
    )
    postgres_dsn: str = DEFAULT_POSTGRES_DSN
    temporal_address: str = "127.0.0.1:7233"
    temporal_namespace: str = "default"
    task_queue: str = DEFAULT_TASK_QUEUE
    start_timeout_seconds: float = Field(
        default=30.0, gt=0, description="how long a start waits for a worker to begin the run"
    )
    max_concurrent_activities: int = 100
    max_concurrent_workflow_tasks: int = 100
    graceful_shutdown_seconds: float = 30.0
    # Worker versioning (README "Upgrading workers"): both or neither.
    deployment_name: str = ""
    build_id: str = ""
    # Routing (README "Operating"): model calls of provider P run on "<model_task_queue>-P",
    # tool calls on tool_task_queue, a toolbox's tools on its own queue (box=queue,...).
    model_task_queue: str = ""
    tool_task_queue: str = ""
    toolbox_queues: str = ""
    # What this worker polls: "workflows" (task_queue), "models", "tools", "toolbox:NAME".
    serve: str = "workflows,models,tools"
    # Retention (`agentrt schedules apply`): purge settled runs after N days; cancel, then
    # purge, runs still waiting after M days; one pass every `retention_every_hours`.
    retention_finished_days: float = 30.0
    retention_waiting_days: float = 14.0
    retention_every_hours: float = 24.0
    maintenance_task_queue: str = DEFAULT_MAINTENANCE_QUEUE
    model_concurrency: int = 0  # 0: max_concurrent_activities
    tool_concurrency: int = 0
    provider_rate_limits: str = Field(
        default="", description="provider=requests/s,...: fleet-wide, on the provider's queue"
    )
    profiles_file: Path = Path(__file__).resolve().parent.parent / "workers" / "profiles.yaml"
    rules_file: Path = Path(__file__).resolve().parent.parent / "workers" / "demo_rules.yaml"
    seal_keys: SecretStr | None = Field(
        default=None, description="kid:base64key[,kid:base64key]; first is active."
    )
    payload_keys: SecretStr | None = Field(
        default=None,
        description="kid:base64key[,...]: encrypt Temporal payloads (first key active).",
    )
    codec_ui_origins: str = "http://127.0.0.1:8233,http://localhost:8233"
    codec_token: SecretStr | None = Field(
        default=None, description="bearer token every codec-server request must present"
    )
    scripted_providers: str = Field(
        default="scripted", description="names served by the scripted model (same rules file)"
    )
    provider_answer_levels: str = Field(
        default="", description="provider=level,...: what of a provider's output may be kept"
    )
    mcp_servers_file: Path | None = Field(
        default=None, description="YAML file of MCP servers whose tools the worker offers"
    )
    toolboxes: str = Field(
        default="", description="pkg.module:attr,...: Toolbox objects the worker loads"
    )
    toolbox_entry_points: bool = Field(
        default=True, description="also load the `agentrt.toolboxes` entry-point group"
    )
    openai_base_url: str = "https://api.openai.com/v1"
    openai_api_key: SecretStr | None = None
    providers_file: Path | None = Field(
        default=None,
        description="YAML: OpenAI-compatible endpoints, prices, answer levels, plug-in options",
    )
    # Telemetry (core/metrics.py, core/tracing.py, core/logs.py); all off unless set.
    metrics_host: str = "127.0.0.1"
    metrics_port: int | None = Field(default=None, ge=0, le=65535, description="/metrics")
    temporal_metrics_port: int | None = Field(
        default=None, ge=0, le=65535, description="the Temporal SDK's own Prometheus exporter"
    )
    otlp_endpoint: str = Field(default="", description="OTLP/HTTP traces, e.g. http://h:4318")
    log_format: Literal["text", "json"] = "text"
    # Test-only: block (or crash) at a named fault point; see workers/faults.py.
    fault_block_at: str = ""
    fault_fail_at: str = ""
    fault_marker_dir: Path | None = None
    # issue 25: decisions
    allow_plaintext_history: bool = Field(
        default=False,
        description="let profiles below privacy full start without payload keys",
    )
    codec_allowed_hosts: str = Field(
        default="",
        description="host names the codec server answers besides loopback (DNS rebinding)",
    )
    # issue 25: input caps
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

    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'agentrt.db').resolve()}"

    def deployment_version(self) -> tuple[str, str] | None:
        """(deployment name, build id) when worker versioning is configured."""
        name, build = self.deployment_name.strip(), self.build_id.strip()
        if name and not build:
            raise ConfigError("AGENTRT_DEPLOYMENT_NAME is set without AGENTRT_BUILD_ID")
        if build and not name:
            raise ConfigError("AGENTRT_BUILD_ID is set without AGENTRT_DEPLOYMENT_NAME")
        return (name, build) if name else None

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

    def serves(self) -> set[str]:
        roles = {r.strip() for r in self.serve.split(",") if r.strip()}
        bad = [r for r in roles if r not in SERVE_ROLES and not r.startswith("toolbox:")]
        if bad or not roles:
            raise ConfigError(
                f"AGENTRT_SERVE: {bad or 'empty'}; use workflows, models, tools, toolbox:NAME"
            )
        return roles

    def answer_levels(self) -> dict[str, str]:
        levels: dict[str, str] = {}
        for part in (p.strip() for p in self.provider_answer_levels.split(",") if p.strip()):
            name, sep, level = part.partition("=")
            if not sep or level not in ("full", "redacted", "metadata", "none"):
                raise ValueError(f"AGENTRT_PROVIDER_ANSWER_LEVELS: bad entry {part!r}")
            levels[name.strip()] = level
        return levels

    def payload_keys_spec(self) -> str | None:
        """The configured payload keys, else the key file `agentrt demo` generated under
        data_dir (so every process of the embedded default shares them), else None."""
        if self.payload_keys is not None:
            return self.payload_keys.get_secret_value()
        path = self.payload_key_file()
        try:
            return path.read_text().strip() or None
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise ConfigError(f"cannot read the payload key {path.resolve()}: {exc}") from None

    def payload_key_file(self) -> Path:
        return self.data_dir / "payload.key"

    def create_payload_key_if_missing(self) -> str:
        """For the embedded default (`agentrt demo`): the configured payload keys, else the
        key file under data_dir, generated on first use like the seal key."""
        if self.payload_keys is not None:
            return self.payload_keys.get_secret_value()
        _create_key_file(self.payload_key_file())
        spec = self.payload_keys_spec()
        if spec is None:
            raise ConfigError(f"the payload key file {self.payload_key_file().resolve()} is empty")
        return spec

    def codec_hosts(self) -> list[str]:
        return [h.strip() for h in self.codec_allowed_hosts.split(",") if h.strip()]

    def seal_key_file(self) -> Path:
        """Where the worker keeps a generated key when AGENTRT_SEAL_KEYS is not set."""
        return self.data_dir / "seal.key"

    def read_seal_keys(self) -> str:
        """The configured seal keys, else the key file under data_dir. Reads only: a client
        must open what the worker sealed, so a key it made up here would be useless."""
        if self.seal_keys is not None:
            return self.seal_keys.get_secret_value()
        path = self.seal_key_file()
        try:
            spec = path.read_text().strip()
        except FileNotFoundError:
            raise ConfigError(
                f"no seal key: set AGENTRT_SEAL_KEYS, or AGENTRT_DATA_DIR to the worker's data "
                f"directory (there is no {path.resolve()})"
            ) from None
        except OSError as exc:
            raise ConfigError(f"cannot read the seal key {path.resolve()}: {exc}") from None
        if not spec:
            raise ConfigError(f"the seal key file {path.resolve()} is empty")
        return spec

    def create_seal_key_if_missing(self) -> str:
        """For the processes that own the data (the worker, `migrate`, the demo): the
        configured keys, else the key file under data_dir, generated on first use. Two
        processes starting at once agree on one key: the file appears whole or not at all."""
        if self.data_dir.is_dir():
            private_dir(self.data_dir)  # one made before the 0700 rule is tightened at start
        if self.seal_keys is not None:
            return self.seal_keys.get_secret_value()
        path = self.seal_key_file()
        _create_key_file(path)
        tighten(path, FILE_MODE)  # a key file made before the 0600 rule
        return self.read_seal_keys()


def _create_key_file(path: Path) -> None:
    """A new random 32-byte key as `local:<base64>` at `path`, unless one is there. Two
    processes starting at once agree on one key: the file appears whole or not at all."""
    if path.exists():
        return
    private_dir(path.parent)
    draft = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(f"local:{base64.b64encode(os.urandom(32)).decode()}\n")
    try:
        os.link(draft, path)  # fails if another process linked its key first
    except FileExistsError:
        pass
    finally:
        draft.unlink()
