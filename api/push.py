"""Push-notification configs: URL validation before anything is stored, and the proto
mapping. Delivery is api/delivery.py."""

import ipaddress
from urllib.parse import urlsplit

from a2a.types import AuthenticationInfo, TaskPushNotificationConfig
from a2a.utils.errors import InvalidParamsError

from agentrt.store.a2a_push import PushConfig


def validate_url(url: str, *, allow_loopback: bool) -> str:
    """http(s), a host, no credentials in the URL; no private or link-local targets, and
    loopback only when the installation allows it (tests)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        _ = parts.port
    except ValueError:
        raise InvalidParamsError(message="The push URL does not parse") from None
    if parts.scheme not in ("http", "https"):
        raise InvalidParamsError(message="The push URL must be http or https")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise InvalidParamsError(message="The push URL may not carry credentials")
    if not host:
        raise InvalidParamsError(message="The push URL has no host")
    loopback = host == "localhost" or host.endswith(".localhost")
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        ip = None
    if ip is not None:
        loopback = ip.is_loopback
        if not loopback and (ip.is_private or ip.is_link_local or ip.is_unspecified):
            raise InvalidParamsError(message="The push URL targets a private address")
    if loopback and not allow_loopback:
        raise InvalidParamsError(message="The push URL targets a loopback address")
    return url


def config_proto(cfg: PushConfig) -> TaskPushNotificationConfig:
    out = TaskPushNotificationConfig(id=cfg.id, task_id=cfg.task_id, url=cfg.url)
    if cfg.token:
        out.token = cfg.token
    if cfg.auth_scheme:
        # Credentials are write-only: never echoed back.
        out.authentication.CopyFrom(AuthenticationInfo(scheme=cfg.auth_scheme))
    return out
