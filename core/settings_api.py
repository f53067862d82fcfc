"""The settings groups of the HTTP side: the `agentrt-api` server and its A2A push, and the
CLI's way to an operator API (`--api`). They live in core, beside the other groups, so
every process knows every `AGENTRT_*` name (core/settings_env.py refuses the rest); the
API process gathers them in `ApiSettings` (api/settings.py)."""

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from agentrt.core.settings_base import SettingsGroup
from agentrt.core.settings_doc import setting


class ApiServerSettings(SettingsGroup):
    """The A2A and operator HTTP server."""

    model_config = SettingsConfigDict(env_prefix="AGENTRT_API_")

    host: str = Field(default="127.0.0.1", description="the address `agentrt-api` binds")
    port: int = Field(default=8080, description="its port")
    public_url: str = setting(
        "",
        "the URL clients reach the API at (agent card, push, Host check)",
        shown="`http://AGENTRT_API_HOST:AGENTRT_API_PORT`",
    )
    # Bearer API keys, stored only as SHA-256 hex digests, each bound to a caller identity:
    # "alice=<sha256hex>,bob=<sha256hex>".
    keys: str = Field(
        default="",
        description=(
            "`identity=<sha256 hex>,…`: A2A bearer keys, by digest (`agentrt-api hash-key`)"
        ),
    )
    agent_name: str = Field(default="agentrt", description="the agent card's name")
    agent_description: str = setting(
        "Durable agent runs on Temporal, served over A2A.",
        "the agent card's description",
        shown="(a sentence)",
    )
    default_skill: str = Field(
        default="",
        description="the profile a message naming no skill starts when several are published",
    )
    blocking_cap_seconds: float = Field(
        default=60.0, description="a blocking `SendMessage` returns the task after this"
    )
    max_body_bytes: int = Field(default=1_000_000, description="a larger request body is refused")
    poll_seconds: float = Field(
        default=0.2, description="how often waits and streams read the journal"
    )
    # On SIGTERM: how long open requests (live follows, blocking sends) may run on before
    # they are cancelled. Unbounded, one open stream would keep the process up forever.
    shutdown_seconds: int = Field(
        default=10, gt=0, description="on SIGTERM, how long open requests may run on"
    )
    migrate: bool = Field(default=True, description="migrate the database at start")
    # issue 25: grants
    # The profiles each A2A caller (an AGENTRT_API_KEYS identity) may start, by name or glob
    # pattern: "alice=support|billing-*,bob=*". A caller not named here starts nothing. A
    # profile that writes without approval is covered only by its exact name.
    key_profiles: str = setting(
        "",
        (
            "`identity=profile|pattern,…`: the profiles each A2A caller may start (see "
            "Who may start what)"
        ),
        shown="unset (A2A callers start nothing)",
    )
    # Host names (or `*.example.com`, or `*`) the API answers to besides its public URL's
    # host and, bound to loopback, 127.0.0.1/localhost/[::1]; others get 421 (api/hosts.py).
    allowed_hosts: str = Field(
        default="",
        description=(
            "host names (`*.example.com`, `*`) the API answers to besides its public "
            "URL's host and, bound to loopback, `127.0.0.1`/`localhost`/`[::1]`"
        ),
    )

    def url(self) -> str:
        """The public URL: `public_url`, else http://host:port."""
        return (self.public_url or f"http://{self.host}:{self.port}").rstrip("/")

    def callers(self) -> dict[str, str]:
        """SHA-256 hex digest of a key → the caller identity it is bound to."""
        out: dict[str, str] = {}
        for entry in (e.strip() for e in self.keys.split(",") if e.strip()):
            name, sep, digest = entry.partition("=")
            if not sep or not name or len(digest) != 64:
                raise ValueError("AGENTRT_API_KEYS entries are 'identity=<sha256 hex>'")
            out[digest.lower()] = name
        return out

    def grants(self) -> dict[str, frozenset[str]]:
        """A2A caller identity → the profile names or patterns it may start."""
        known = set(self.callers().values())
        out: dict[str, frozenset[str]] = {}
        for entry in (e.strip() for e in self.key_profiles.split(",") if e.strip()):
            name, sep, patterns = entry.partition("=")
            granted = frozenset(p.strip() for p in patterns.split("|") if p.strip())
            if not sep or not name.strip() or not granted:
                raise ValueError("AGENTRT_API_KEY_PROFILES entries are 'identity=profile|pattern'")
            if name.strip() not in known:
                raise ValueError(f"AGENTRT_API_KEY_PROFILES names {name.strip()!r}, no API key's")
            out[name.strip()] = out.get(name.strip(), frozenset()) | granted
        return out


class PushSettings(SettingsGroup):
    """A2A push notifications: delivery retries, and where they may go (issue 25)."""

    model_config = SettingsConfigDict(env_prefix="AGENTRT_PUSH_")

    timeout_seconds: float = Field(default=10.0, description="one push attempt's deadline")
    backoff_seconds: float = Field(default=1.0, description="first retry delay (doubled each time)")
    backoff_max_seconds: float = Field(default=300.0, description="the retry delay's cap")
    max_attempts: int = Field(default=8, description="attempts before a dead letter")
    # Push targets must be global unicast addresses; these name the exceptions
    # (comma-separated): networks ("127.0.0.0/8" for tests, "10.1.2.0/24" for an internal
    # receiver), and host names whose resolved addresses are all allowed.
    allowed_networks: str = Field(
        default="",
        description=(
            "CIDRs push notifications may go to besides global unicast addresses (see "
            "Outbound requests)"
        ),
    )
    allowed_hosts: str = Field(
        default="",
        description="host names push notifications may go to besides global unicast addresses",
    )
    client_concurrency: int = Field(
        default=4, gt=0, description="push deliveries in flight per A2A client"
    )
    max_in_flight: int = Field(default=64, gt=0, description="push deliveries in flight in all")


class RemoteSettings(BaseSettings):
    """The CLI against an operator API (starter/remote.py)."""

    model_config = SettingsConfigDict(env_prefix="AGENTRT_", extra="ignore")
    api_url: str = Field(
        default="",
        description=(
            "the CLI goes through this operator API instead of Temporal and the database (`--api`)"
        ),
    )
    api_token: SecretStr | None = Field(
        default=None, description="the CLI's operator token there (`--token`)"
    )
