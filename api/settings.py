"""Settings of the A2A HTTP process (`AGENTRT_` prefix, like the rest)."""

import hashlib
import hmac

from pydantic import Field

from agentrt.core.settings import Settings
from agentrt.core.settings_api import ApiServerSettings, PushSettings

__all__ = ["ApiServerSettings", "ApiSettings", "PushSettings", "key_digest"]


class ApiSettings(Settings):
    """The API process's settings: every group, plus its own server and push groups."""

    api: ApiServerSettings = Field(default_factory=ApiServerSettings)
    push: PushSettings = Field(default_factory=PushSettings)


def key_digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def identify(callers: dict[str, str], key: str) -> str | None:
    """The identity a presented key is bound to, compared in constant time."""
    presented = key_digest(key)
    found = None
    for digest, name in callers.items():
        if hmac.compare_digest(digest, presented):
            found = name
    return found
