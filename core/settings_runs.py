"""The settings of what runs may use and keep: the model providers, the keys that seal data
at rest and encrypt Temporal payloads, the codec server that decrypts for Temporal Web,
retention, and the caps on input and run length. Each group reads its own `AGENTRT_*`
variables (core/settings_base.py)."""

from pathlib import Path

from pydantic import Field, SecretStr
from pydantic_settings import SettingsConfigDict

from agentrt.contracts.ids import DEFAULT_MAINTENANCE_QUEUE
from agentrt.contracts.plan import (
    DEFAULT_MAX_AGENT_DEPTH,
    DEFAULT_MAX_CHILDREN,
    MAX_AGENT_DEPTH_LIMIT,
    MAX_CHILDREN_LIMIT,
)
from agentrt.contracts.profiles import (
    DEFAULT_SEGMENT_ROUNDS,
    ITERATIONS_CEILING_LIMIT,
    MAX_ITERATIONS_CEILING,
)
from agentrt.contracts.run import DEFAULT_MAX_PROMPT_CHARS, PROMPT_CHARS_CEILING
from agentrt.core.settings_base import SettingsGroup, split_names
from agentrt.core.settings_doc import capped, setting

_WORKERS = Path(__file__).resolve().parent.parent / "workers"


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
        for part in split_names(self.provider_answer_levels):
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
            "bearer token every `/decode` request must carry (Temporal Web, operators); "
            "`codec-server` refuses to start without it unless given `--dev-no-token`"
        ),
    )
    encode_token: SecretStr | None = Field(
        default=None,
        description=(
            "bearer token of workers and clients (a `temporal` CLI sending signals): the only "
            "one `/encode` accepts; it decodes too. Unset: `/encode` is refused to everyone"
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
        return split_names(self.ui_origins)

    def hosts(self) -> list[str]:
        return split_names(self.allowed_hosts)


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


class LimitSettings(SettingsGroup):
    """Input caps (issue 25), at every door a prompt comes in by; how long a run may be."""

    max_prompt_chars: int = capped(
        DEFAULT_MAX_PROMPT_CHARS,
        PROMPT_CHARS_CEILING,
        "a longer prompt or A2A message is refused before anything is created",
    )
    max_part_chars: int = capped(
        DEFAULT_MAX_PROMPT_CHARS,
        PROMPT_CHARS_CEILING,
        "a longer text part of an A2A message is refused",
    )
    # The design bounds a run at 20 rounds; an installation raises it explicitly, on its
    # clients (a start asking for more is refused) and its workers (which refuse a profile
    # over it at start, and a start that came around the clients).
    max_iterations_ceiling: int = capped(
        MAX_ITERATIONS_CEILING,
        ITERATIONS_CEILING_LIMIT,
        "the most rounds a profile or a start may ask for; raise it explicitly for long runs",
    )
    segment_rounds: int = capped(
        DEFAULT_SEGMENT_ROUNDS,
        ITERATIONS_CEILING_LIMIT,
        "a worker continues a run as new after this many rounds, so each Temporal history "
        "stays bounded",
    )
    # A tree of runs (contracts/agents.py): a child run started by a delegation is one
    # deeper than its parent; a delegation past either bound is refused to the model.
    max_agent_depth: int = capped(
        DEFAULT_MAX_AGENT_DEPTH,
        MAX_AGENT_DEPTH_LIMIT,
        "how deep a tree of child agents may grow; a client's run is depth 0",
    )
    max_children_per_run: int = capped(
        DEFAULT_MAX_CHILDREN, MAX_CHILDREN_LIMIT, "the most child agent runs one run may start"
    )
