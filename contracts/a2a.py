"""Payloads between the agent run and its A2A task (the remote view of a run)."""

from pydantic import BaseModel, Field


class ProjectRequest(BaseModel):
    """Project the run's committed state onto its A2A task view and journal."""

    run_id: str
    task_id: str


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
