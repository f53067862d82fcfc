"""The guardrail chain: each guardrail gives a verdict; the strictest wins.

Profile patterns are RE2 (contracts/linear.py): linear in the text, checked when the
profiles file loads (core/profiles.py). A recorded pattern RE2 refuses (a snapshot from
before that check) counts as matching: a guardrail that cannot run fails closed.
"""

from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum

from agentrt.activities._common import offload
from agentrt.contracts.linear import NotLinearError, linear
from agentrt.contracts.profiles import GuardrailConfig
from agentrt.contracts.redaction import has_secret, redact_text


class Verdict(IntEnum):
    """Ordered by strictness: the chain's verdict is the maximum."""

    ALLOW = 0
    REDACT = 1
    REQUIRE_APPROVAL = 2
    DENY = 3


@dataclass(frozen=True)
class Checked:
    verdict: Verdict
    text: str  # redacted when the verdict is REDACT
    guardrail: str = ""


Guardrail = Callable[[str, GuardrailConfig], Verdict]


def _secrets(text: str, _cfg: GuardrailConfig) -> Verdict:
    return Verdict.REDACT if has_secret(text) else Verdict.ALLOW


def _matches(pattern: str, text: str) -> bool:
    try:
        return linear(pattern, ignore_case=True).search(text)
    except NotLinearError:
        return True


def _patterns(patterns: list[str], verdict: Verdict) -> Callable[[str], Verdict]:
    return lambda text: verdict if any(_matches(p, text) for p in patterns) else Verdict.ALLOW


BUILT_IN: dict[str, Guardrail] = {"secrets": _secrets}


def check(text: str, names: list[str], cfg: GuardrailConfig) -> Checked:
    """Run the named guardrails plus the profile's deny/approval patterns over `text`.
    Linear in the text, but not free on a long one: async callers run it in a thread."""
    results: list[tuple[Verdict, str]] = [
        (BUILT_IN[n](text, cfg), n) for n in names if n in BUILT_IN
    ]
    results.append((_patterns(cfg.deny_patterns, Verdict.DENY)(text), "deny_patterns"))
    results.append(
        (_patterns(cfg.approval_patterns, Verdict.REQUIRE_APPROVAL)(text), "approval_patterns")
    )
    verdict, name = max(results, key=lambda r: r[0], default=(Verdict.ALLOW, ""))
    if verdict is Verdict.ALLOW:
        return Checked(Verdict.ALLOW, text)
    redacted = redact_text(text, max_chars=None) if verdict is Verdict.REDACT else text
    return Checked(verdict, redacted, name)


# Up to this many characters a check runs on the event loop: it takes tens of microseconds
# there, less than the thread hop that would spare the loop (a wake-up of a pool thread and
# one of the loop, two GIL hand-overs). Linear in the text, so the bound bounds the stall.
INLINE_CHARS = 2000


async def checked(text: str, names: list[str], cfg: GuardrailConfig) -> Checked:
    """`check`, off the event loop for a long text (the worker's other runs go on while it
    is read) and on it for a short one."""
    if len(text) <= INLINE_CHARS:
        return check(text, names, cfg)
    return await offload(check, text, names, cfg)
