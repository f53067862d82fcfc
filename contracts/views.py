"""The read models of a run (the facade, the CLI, the API): the run as it stands, its
events, and the write in flight it may wait on."""

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from agentrt.contracts.approval import PendingApproval
from agentrt.contracts.enums import EventKind, Outcome, PendingState, RunStatus, TerminationReason


class PendingEffectView(BaseModel):
    """A write in flight or interrupted (the run's fence): what an operator needs to check
    the target system. `arguments` are kept at the run's privacy level (store/runs/pending.py):
    verbatim at full, redacted at redacted, withheld (only `arguments_size`) below."""

    call_id: str
    tool: str
    state: PendingState
    idempotency_key: str = ""
    effect: str | None = None  # as the run's plan recorded it
    since: datetime | None = None  # the fence's last change (see store/runs/pending.py)
    privacy: str = "metadata"  # the level `arguments` are shown at
    arguments: dict[str, Any] | None = None
    arguments_size: int | None = None
    # The fence's id (a digest of its token): an answer on the write names it, so an answer
    # meant for an earlier fence of the same call is refused as stale.
    fence: str | None = None


class RunHead(BaseModel):
    """What every view of a run begins with (this one, the operator API's): which run, of
    which profile, and where it stands."""

    run_id: str
    profile: str
    status: RunStatus
    outcome: Outcome | None = None
    termination_reason: TerminationReason | None = None


class RunView(RunHead):
    iterations: int = 0
    truncated: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None  # None: running, or a call's price was unknown
    answer: str | None = None
    output: Any = None  # a typed answer's validated object (JSON), kept as the answer is
    created_at: datetime
    finished_at: datetime | None = None
    revision: int = 0
    pending_effect: PendingEffectView | None = None
    pending_approval: PendingApproval | None = None
    # The effect class of each pending call, by call id, as the run's plan recorded it.
    call_effects: dict[str, str] = Field(default_factory=dict)
    initiator: str = "anonymous"
    # The failure code beside the reason: an ErrorType value, or a Python error's name.
    error_type: str | None = None
    # The tree of runs (contracts/agents.py): the run that delegated to this one, and the
    # child runs this one started, oldest first (filled by a single run's read).
    parent_run_id: str | None = None
    children: list[str] = Field(default_factory=list)


class EventView(BaseModel):
    run_id: str
    sequence: int
    # The event's place in the order the run's events were committed: what a follow resumes
    # after (`sequence`, reserved before the write, is not in commit order).
    position: int = -1
    kind: EventKind
    round: int
    duration_ms: float | None = None
    payload: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime
