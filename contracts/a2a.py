"""Payloads between the agent run and its A2A task (the remote view of a run)."""

import hashlib
from typing import Literal

from pydantic import BaseModel, Field

from agentrt.contracts.profiles import PrivacyLevel


class ProjectRequest(BaseModel):
    """Project the run's committed state onto its A2A task view and journal. `answer_level`
    is the plan's answer ceiling; the projection tightens it by what the run recorded (a
    stricter provider that answered), so it never reads the plan back."""

    run_id: str
    task_id: str
    answer_level: PrivacyLevel


class ProjectResult(BaseModel):
    """What projecting a run onto its A2A task did: the run revision it reached and the
    journal events it wrote."""

    run_revision: int
    events_written: int = 0


class InputMessage(BaseModel):
    """A follow-up user message for a run waiting for input (A2A INPUT_REQUIRED).

    It moves the run only with an attestation of its sender (store/security/attest.py), made by the
    A2A API for the authenticated owner of the task (or a client holding the seal key):
    one sent straight to the `submit_input` update without it is refused."""

    kind: Literal["input"] = "input"  # one kind of `PauseAnswer` (contracts/answers.py)
    message_id: str = Field(min_length=1, max_length=200)
    # The configured cap (AGENTRT_MAX_PROMPT_CHARS) is checked before; this is its ceiling
    # (contracts/run.PROMPT_CHARS_CEILING, which imports this module).
    text: str = Field(min_length=1, max_length=1_000_000)
    sent_by: str = Field(default="anonymous", max_length=200)
    attestation: str | None = Field(default=None, max_length=4000)

    def claim(self, run_id: str) -> str:
        """What the attestation seals: who sent which text, as which message, to which run
        (the text by its digest: the claim stays short whatever the text's length)."""
        digest = hashlib.sha256(self.text.encode("utf-8", "surrogatepass")).hexdigest()
        return "\x1f".join((run_id, self.sent_by, self.message_id, digest))
