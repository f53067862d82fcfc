"""Remote A2A agents as tool sources: the `remote_agents:` section of the servers file
(AGENTRT_MCP_SERVERS_FILE), or `Profile(tools=[RemoteAgent(...)])` in Python.

remote_agents:
  - name: partner                    # tools are named partner.<skill id>
    url: https://partner.example/    # where its Agent Card is (/.well-known/agent-card.json)
    token_from_env: PARTNER_TOKEN    # the bearer token: a variable of the worker's environment
    # token_file: /run/secrets/partner   (or a file holding it; never the token itself)
    pinned_card_digest: sha256:9f2c...   # the card as the operator reviewed it
    skills:
      quote: READ_ONLY               # an effect, or an object:
      refund: {effect: NON_IDEMPOTENT_WRITE, output_schema: {type: object, required: [id]}}
      book: {reserve: {tokens: 4000, cost_usd: 0.05}}   # one call's worst case, for budgets

Every skill of the card is a tool; its effect is the one declared here, by default a
NON_IDEMPOTENT_WRITE (fenced, approval-bound): a remote agent may do anything. A card whose
digest is not `pinned_card_digest` is refused (activities/toolbox/remote_http.py): its
tools are not offered, and once a send is refused and the card checked again
(activities/toolbox/remote_agent.py), a call of one already offered is refused before
anything is sent, until an operator pins the new digest (`agentrt-worker --list-tools`
shows it).
"""

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator, model_validator

from agentrt.contracts.budget import Allowance
from agentrt.contracts.enums import ToolEffect
from agentrt.contracts.errors import ConfigError
from agentrt.contracts.held import EntryKind
from agentrt.contracts.output import check_schema
from agentrt.contracts.strict import Strict

AGENT_NAME = r"^[A-Za-z][A-Za-z0-9_-]{0,63}$"  # no '.': it separates agent and skill
DIGEST = r"^sha256:[0-9a-f]{64}$"


class RemoteSkill(Strict):
    """What the operator declares of one skill: its effect, and the schema its answer
    must meet (a JSON answer; one that breaks it is the call's invalid_output)."""

    effect: ToolEffect = ToolEffect.NON_IDEMPOTENT_WRITE
    output_schema: dict[str, Any] | None = None
    # The worst case of one call (tokens, cost_usd): reserved from a budgeted run's room
    # before the call is sent (no room: refused, nothing sent) and counted spent after, as
    # the remote's own spend is not reported. None: the call spends nothing of the budget.
    reserve: Allowance | None = None

    @field_validator("output_schema")
    @classmethod
    def _schema(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None:
            check_schema(value)
        return value


class RemoteAgent(Strict):
    """A remote A2A agent, a toolbox of its name (its skills are `<name>.<skill id>`).
    Written in Python and held by a profile, `Profile(tools=[RemoteAgent(name="partner",
    url="https://partner.example/", token_from_env="PARTNER_TOKEN",
    pinned_card_digest="sha256:...")])`, or an entry of the servers file's
    `remote_agents:`, which loads onto this type. The token is read from the worker's
    environment or a file when it starts: never written in the definition."""

    name: str = Field(pattern=AGENT_NAME)
    url: str = Field(pattern=r"^https?://")
    token_from_env: str | None = Field(default=None, min_length=1)
    token_file: Path | None = None
    pinned_card_digest: str | None = Field(default=None, pattern=DIGEST)
    skills: dict[str, RemoteSkill] = Field(default_factory=dict)
    timeout_seconds: float = Field(default=30.0, gt=0, le=3600)

    @field_validator("skills", mode="before")
    @classmethod
    def _bare_effects(cls, value: Any) -> Any:
        """`skill: EFFECT` is short for `skill: {effect: EFFECT}`."""
        if isinstance(value, Mapping):
            return {k: {"effect": v} if isinstance(v, str | ToolEffect) else v
                    for k, v in value.items()}  # fmt: skip
        return value

    @model_validator(mode="after")
    def _one_secret(self) -> "RemoteAgent":
        if self.token_from_env is not None and self.token_file is not None:
            raise ValueError("a remote agent takes token_from_env or token_file, not both")
        return self

    def profile_entry(self) -> tuple[EntryKind, str]:
        """Held by a profile: the toolbox of its name."""
        return "toolbox", self.name

    def token(self, environ: Mapping[str, str] | None = None) -> str | None:
        """The bearer token, read now; one that cannot be read is a ConfigError (at start,
        rather than a failure on the first call). The error names the variable or file,
        never the value."""
        env = os.environ if environ is None else environ
        if self.token_from_env is not None:
            if self.token_from_env not in env:
                raise ConfigError(
                    f"remote agent {self.name!r}: environment variable "
                    f"{self.token_from_env} is not set"
                )
            return env[self.token_from_env].strip()
        if self.token_file is not None:
            try:
                return self.token_file.read_text().strip()
            except OSError as exc:
                raise ConfigError(
                    f"remote agent {self.name!r}: token file {self.token_file} cannot be read "
                    f"({type(exc).__name__})"
                ) from None
        return None


def card_digest(canonical: bytes) -> str:
    """How a card is pinned: `sha256:` and the hex digest of its canonical JSON."""
    return "sha256:" + hashlib.sha256(canonical).hexdigest()
