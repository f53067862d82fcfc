"""Which agent profiles a principal may start: operator API tokens and A2A keys are granted
profiles by name or glob pattern (`support`, `billing-*`, `*`).

A profile that lets writes run without approval needs its own name in the grants: no
pattern covers it. The worker registers whether a profile does (`Profile.writes_unapproved`:
`approval: none` with any tool, failing closed, since tool effects are the worker's)."""

from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase

from agentrt.contracts.profiles import Profile
from agentrt.contracts.registered import RegisteredProfile


@dataclass(frozen=True)
class Grants:
    patterns: frozenset[str] = frozenset()
    everything: bool = False  # `admin`

    @classmethod
    def of(cls, patterns: Iterable[str], *, everything: bool = False) -> "Grants":
        return cls(frozenset(patterns), everything)

    def allows(self, profile: Profile | RegisteredProfile) -> bool:
        if self.everything:
            return True
        if profile.writes_unapproved:
            return profile.name in self.patterns  # named, not matched
        return any(fnmatchcase(profile.name, p) for p in self.patterns)

    def shown(self) -> list[str]:
        return ["*(admin)"] if self.everything else sorted(self.patterns)


def refusal(who: str, profile: RegisteredProfile) -> str:
    """The message of a refused start (names nothing the caller did not send)."""
    if profile.writes_unapproved:
        return (
            f"{who} is not granted the profile {profile.name!r}: it runs writes without "
            "approval, so only a grant that names it exactly covers it"
        )
    return f"{who} is not granted the profile {profile.name!r}"
