"""Push-notification configs: everything a client asks for is checked before anything is
stored (ids, URL, token, authentication), and the proto mapping. Where a push may go is
core/outbound.py; delivery is api/a2a/delivery.py."""

from a2a.types import AuthenticationInfo, TaskPushNotificationConfig
from a2a.utils.errors import InvalidParamsError

from agentrt.api.a2a.ids import CONFIG_ID, checked_id, printable
from agentrt.api.settings import ApiSettings
from agentrt.contracts.errors import ConfigError
from agentrt.core.outbound import Policy, Refused, check_url
from agentrt.store.a2a.push import PushConfig, PushSpec
from agentrt.store.db.a2a_tables import A2APushConfigRow

AUTH_SCHEME = A2APushConfigRow.__table__.c.auth_scheme.type.length  # type: ignore[attr-defined]
MAX_SECRET = 4096  # a notification token or credentials: sealed text, but bounded


def policy(settings: ApiSettings) -> Policy:
    try:
        return Policy.parse(settings.push.allowed_networks, settings.push.allowed_hosts)
    except ValueError as exc:
        raise ConfigError(f"AGENTRT_PUSH_ALLOWED_NETWORKS / _HOSTS: {exc}") from None


def validate_url(url: str, allowed: Policy) -> str:
    try:
        check_url(url, allowed)
    except Refused as exc:
        raise InvalidParamsError(message=f"Refused: {exc}") from None
    return url


def _secret(value: str, field: str, limit: int) -> str | None:
    if len(value) > limit or not printable(value):
        raise InvalidParamsError(
            message=f"{field} must be at most {limit} characters, with no control characters"
        )
    return value or None


def push_spec(cfg: TaskPushNotificationConfig, allowed: Policy, new_id: str) -> PushSpec:
    """The config to store, or InvalidParamsError: nothing is written for a bad one."""
    config_id = checked_id(cfg.id, "The push config id", CONFIG_ID) or new_id
    auth = cfg.authentication if cfg.HasField("authentication") else None
    scheme = _secret(auth.scheme, "authentication.scheme", AUTH_SCHEME) if auth else None
    if scheme is not None and (not scheme.isascii() or " " in scheme):
        raise InvalidParamsError(message="authentication.scheme must be one ASCII token")
    return PushSpec(
        config_id=config_id,
        url=validate_url(cfg.url, allowed),
        token=_secret(cfg.token, "token", MAX_SECRET),
        auth_scheme=scheme,
        auth_credentials=_secret(auth.credentials, "credentials", MAX_SECRET) if auth else None,
    )


def config_proto(cfg: PushConfig) -> TaskPushNotificationConfig:
    out = TaskPushNotificationConfig(id=cfg.id, task_id=cfg.task_id, url=cfg.url)
    if cfg.token:
        out.token = cfg.token
    if cfg.auth_scheme:
        # Credentials are write-only: never echoed back.
        out.authentication.CopyFrom(AuthenticationInfo(scheme=cfg.auth_scheme))
    return out
