"""Load the profiles file into typed objects, with typed errors."""

from collections.abc import Mapping
from pathlib import Path

import yaml
from pydantic import BaseModel, ValidationError

from agentrt.contracts.errors import ConfigError
from agentrt.contracts.linear import NotLinearError, linear
from agentrt.contracts.profiles import AgentProfile


class ProfilesFile(BaseModel):
    profiles: list[AgentProfile]


def load_profiles(path: Path) -> dict[str, AgentProfile]:
    try:
        data = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise ConfigError(f"cannot read profiles file {path}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"profiles file {path} is not UTF-8 text: {exc.reason}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"profiles file {path} does not parse: {exc}") from exc
    except RecursionError:
        raise ConfigError(f"profiles file {path} does not parse: nested too deeply") from None
    try:
        parsed = ProfilesFile.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"profiles file {path} is invalid: {exc}") from exc
    names = [p.name for p in parsed.profiles]
    if len(names) != len(set(names)):
        raise ConfigError(f"profiles file {path} declares a profile twice")
    for profile in parsed.profiles:
        _check_patterns(path, profile)
    return {p.name: p for p in parsed.profiles}


def needs_payload_keys(
    profiles: Mapping[str, AgentProfile], *, encrypted: bool, allow_plaintext: bool
) -> frozenset[str]:
    """The profiles a client may not start: those below privacy `full`, when it sends
    payloads unencrypted and the deployment did not allow plaintext history."""
    if encrypted or allow_plaintext:
        return frozenset()
    return frozenset(name for name, p in profiles.items() if p.privacy != "full")


def _check_patterns(path: Path, profile: AgentProfile) -> None:
    """Guardrail patterns run over user and model text: each must compile in RE2, whose
    matching is linear in the text (no back-references, no look-around)."""
    rails = profile.guardrails
    for field, patterns in (
        ("deny_patterns", rails.deny_patterns),
        ("approval_patterns", rails.approval_patterns),
    ):
        for pattern in patterns:
            try:
                linear(pattern, ignore_case=True)
            except NotLinearError as exc:
                raise ConfigError(
                    f"profiles file {path}: profile {profile.name!r} {field} {pattern!r} "
                    f"is not a linear-time pattern: {exc}"
                ) from None


def profile_queues(path: Path) -> dict[str, str]:
    """profile → task queue, for the profiles that name one: how clients route a start."""
    return {name: p.task_queue for name, p in load_profiles(path).items() if p.task_queue}
