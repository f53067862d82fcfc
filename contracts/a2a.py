"""Payloads between the agent run and its A2A task (the remote view of a run)."""

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
    run_revision: int
    events_written: int = 0


class InputMessage(BaseModel):
    """A follow-up user message for a run waiting for input (A2A INPUT_REQUIRED)."""

    message_id: str = Field(min_length=1, max_length=200)
    # The configured cap (AGENTRT_MAX_PROMPT_CHARS) is checked before; this is its ceiling
    # (contracts/run.PROMPT_CHARS_CEILING, which imports this module).
    text: str = Field(min_length=1, max_length=1_000_000)
    sent_by: str = Field(default="anonymous", max_length=200)
