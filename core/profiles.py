"""Profiles onto the typed `Profile`: the profiles file through the one YAML loader
(core/yaml_file.py), and the checks a set of profiles passes whether it was written in
Python or YAML, with typed errors."""

from collections.abc import Iterable
from pathlib import Path

from pydantic import ValidationError

from agentrt.contracts.agents import check_agents
from agentrt.contracts.errors import ConfigError
from agentrt.contracts.linear import NotLinearError, linear
from agentrt.contracts.profiles import Profile, over_ceiling
from agentrt.contracts.strict import Strict
from agentrt.core.yaml_file import load_yaml, message


class ProfilesFile(Strict):
    profiles: list[Profile]


def load_profiles(path: Path) -> dict[str, Profile]:
    """The profiles of a YAML file (`profiles: [...]`), by name."""
    parsed = load_yaml(path, ProfilesFile, "profiles file", describe=_problems)
    return checked_profiles(parsed.profiles, f"profiles file {path}")


def checked_profiles(profiles: Iterable[Profile], where: str) -> dict[str, Profile]:
    """`profiles` by name: each name once, each guardrail pattern linear-time, each child
    agent one of them and no cycle among them."""
    out: dict[str, Profile] = {}
    for profile in profiles:
        if profile.name in out:
            raise ConfigError(f"{where} declares the profile {profile.name!r} twice")
        _check_patterns(where, profile)
        out[profile.name] = profile
    check_agents(out)  # each child known (else the closest name), no cycle
    return out


def check_ceiling(profiles: Iterable[Profile], ceiling: int) -> None:
    """The worker's start check: a profile asking for more rounds than the installation's
    ceiling (AGENTRT_MAX_ITERATIONS_CEILING) is refused, never clamped silently."""
    for profile in profiles:
        over = over_ceiling(profile.max_iterations, ceiling)
        if over is not None:
            raise ConfigError(f"profile {profile.name!r}: {over}")


def _problems(exc: ValidationError, data: object) -> str:
    """Each error once, where it is: `profile 'support': ...` rather than `profiles.0`."""
    listed = data.get("profiles") if isinstance(data, dict) else None
    out = []
    for e in exc.errors():
        loc = list(e["loc"])
        if len(loc) >= 2 and loc[0] == "profiles" and isinstance(loc[1], int):
            raw = listed[loc[1]] if isinstance(listed, list) else None
            name = raw.get("name") if isinstance(raw, dict) else None
            loc = [f"profile {name!r}" if name else f"profile #{loc[1] + 1}", *loc[2:]]
        where = ".".join(str(p) for p in loc) or "file"
        text = message(e)  # a profile's own check names the profile already
        out.append(text if text.startswith(f"{where}: ") else f"{where}: {text}")
    return "; ".join(out)


def _check_patterns(where: str, profile: Profile) -> None:
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
                    f"{where}: profile {profile.name!r} {field} {pattern!r} "
                    f"is not a linear-time pattern: {exc}"
                ) from None
