"""Which agent profiles a principal may start: operator API tokens and A2A keys are granted
profiles by name or glob pattern (`support`, `billing-*`, `*`).

A profile that lets writes run without approval needs its own name in the grants: no
pattern covers it. The API cannot see tool effects (the worker's toolboxes declare them),
so it counts `approval: none` with any tool as such a profile, failing closed; a read-only
profile declares `approval: writes`, which asks for nothing when no tool writes."""

from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase

from agentrt.contracts.profiles import AgentProfile


def writes_unapproved(profile: AgentProfile) -> bool:
    """Whether a run of `profile` may call a tool with no approval asked for."""
    return profile.approval == "none" and bool(profile.tools or profile.toolboxes)


@dataclass(frozen=True)
class Grants:
    patterns: frozenset[str] = frozenset()
    everything: bool = False  # `admin`

    @classmethod
    def of(cls, patterns: Iterable[str], *, everything: bool = False) -> "Grants":
        return cls(frozenset(patterns), everything)

    def allows(self, profile: AgentProfile) -> bool:
        if self.everything:
            return True
        if writes_unapproved(profile):
            return profile.name in self.patterns  # named, not matched
        return any(fnmatchcase(profile.name, p) for p in self.patterns)

    def shown(self) -> list[str]:
        return ["*(admin)"] if self.everything else sorted(self.patterns)


def refusal(who: str, profile: AgentProfile) -> str:
    """The message of a refused start (names nothing the caller did not send)."""
    if writes_unapproved(profile):
        return (
            f"{who} is not granted the profile {profile.name!r}: it runs writes without "
            "approval, so only a grant that names it exactly covers it"
        )
    return f"{who} is not granted the profile {profile.name!r}"
