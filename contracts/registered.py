"""What a worker registers of each profile it serves, for clients, the API and the Agent
Card to route and refuse by (store/ops/registry.py writes it)."""

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from agentrt.contracts.profiles import PrivacyLevel, Profile, Reach


class RegisteredProfile(BaseModel):
    """What a worker registers of a profile it serves (store/ops/registry.py), for the
    clients and the API: where its runs start, which start they refuse without payload
    keys, what a grant must name, what the Agent Card offers. The worker's own profile
    stays the authority on the run: it still refuses a profile it does not serve."""

    model_config = ConfigDict(frozen=True)

    name: str
    task_queue: str | None = None
    privacy: PrivacyLevel = "full"
    answer_level: PrivacyLevel = "full"
    writes_unapproved: bool = False
    publish: bool = False
    description: str = ""
    digest: str = ""  # of the whole profile: tells two workers' differing copies apart
    # The payload key ids its workers decrypt with, active first, comma-separated: "" none,
    # None not said (a worker of an earlier build). A client refuses a start they could
    # not read (starter/_starting.py: payload_key_mismatch).
    payload_keys: str | None = None
    # What its runs' tools may do to the world, from their declared effects (the MCP
    # server's tool annotations say it): "read_only", "idempotent" (writes that may
    # repeat), "writes" (a non-idempotent write); None: not said (a toolbox not listed
    # yet, or a worker of an earlier build), read as "writes" (fail closed).
    reach: Reach | None = None
    # The typed answer's JSON Schema (Profile.output_schema); None: a text answer.
    output_schema: dict[str, Any] | None = None

    @field_validator("output_schema", mode="before")
    @classmethod
    def _decoded(cls, value: Any) -> Any:
        return json.loads(value) if isinstance(value, str) else value  # a driver's raw JSON

    @classmethod
    def of(
        cls,
        profile: Profile,
        payload_keys: Sequence[str] | None = None,
        reach: Reach | None = None,
    ) -> "RegisteredProfile":
        """What a worker with `payload_keys` (their ids, active first) registers of
        `profile`; None: a worker that does not say. `reach`: what its tools may do, as
        the worker resolved them."""
        # Each field named as one of the profile's (a field or, as `writes_unapproved`, a
        # property) is the profile's own; the worker adds the rest.
        shared = cls.model_validate(profile, from_attributes=True)
        # Without `agents` when it has none: the digest of a profile written before child
        # agents stays what its workers registered (no false mismatch in a rolling deploy).
        dumped = profile.model_dump_json(exclude=None if profile.agents else {"agents"})
        return shared.model_copy(
            update={
                "digest": hashlib.sha256(dumped.encode()).hexdigest(),
                "payload_keys": None if payload_keys is None else ",".join(payload_keys),
                "reach": reach,
            }
        )
