"""Request and response bodies of the operator API. Pending calls and a pending write are
shown at the run's privacy level: their arguments only at `full` (or redacted at
`redacted`)."""

from datetime import datetime
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field

from agentrt.api.operator.failures import FailureOut, failure
from agentrt.contracts.enums import EventKind, PendingState
from agentrt.contracts.strict import Strict
from agentrt.contracts.views import EventView, RunHead, RunView
from agentrt.store.runs.pending_context import PendingContext
from agentrt.store.runs.query import Attention, attention
from agentrt.store.steps.privacy import filter_payload


class DecisionIn(Strict):
    _noun: ClassVar[str] = "field"
    verdict: Literal["approve", "deny"]
    turn_digest: str = Field(min_length=1, max_length=128)
    reason: str | None = Field(default=None, max_length=2000)


class CancelIn(Strict):
    _noun: ClassVar[str] = "field"
    reason: str | None = Field(default=None, max_length=2000)


class PendingCallOut(BaseModel):
    call_id: str
    name: str
    # Present at privacy level full (verbatim) or redacted (redacted); else only its size.
    arguments: dict[str, Any] | None = None
    arguments_size: int | None = None
    effect: str | None = Field(
        default=None, description="READ_ONLY, IDEMPOTENT_WRITE or NON_IDEMPOTENT_WRITE"
    )


class PendingWriteOut(BaseModel):
    """A write the run's fence holds: in flight (stamped, executing) or interrupted with its
    outcome unknown. What an operator needs to ask the target system what became of it."""

    call_id: str
    tool: str
    state: PendingState
    idempotency_key: str
    effect: str | None = None
    since: datetime | None = Field(default=None, description="the fence's last change")
    # Present at privacy level full (verbatim) or redacted (redacted); else only its size.
    arguments: dict[str, Any] | None = None
    arguments_size: int | None = None
    fence: str | None = Field(
        default=None, description="the fence's id: an answer (POST /runs/{id}/reconcile) names it"
    )


class PendingOut(BaseModel):
    turn_digest: str
    round: int
    requested_at: datetime
    calls: list[PendingCallOut]
    # What the decider reads the calls against, as the run's events keep them: text at
    # privacy level full or redacted, else null (with `content_withheld`).
    prompt: str | None = Field(default=None, description="the user's prompt")
    said: str | None = Field(default=None, description="the model's text before the calls")
    content_withheld: bool = False
    policy: str | None = Field(
        default=None, description="the approval policy that asked people (`policy name@version`)"
    )
    approvals_needed: int = Field(
        default=1, description="how many distinct people must approve the turn"
    )
    approved_by: list[str] = Field(
        default_factory=list, description="who approved the turn so far (of approvals_needed)"
    )


class RunOut(RunHead):
    initiator: str
    iterations: int
    truncated: bool
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None = Field(
        default=None,
        description="the cost so far while the run waits (each pause records its rounds, "
        "tokens and cost), the total once it ended; null: a price unknown, or running",
    )
    answer: str | None = None
    output: Any = Field(
        default=None, description="a typed answer's validated object (profile output_schema)"
    )
    created_at: datetime
    finished_at: datetime | None = None
    revision: int
    privacy: str
    pending_approval: PendingOut | None = None
    pending_write: PendingWriteOut | None = None
    attention: Attention | None = Field(
        default=None, description="why the run needs an operator (GET /attention lists them)"
    )
    error_type: str | None = Field(default=None, description="a failed run's failure code")
    failure: FailureOut | None = Field(
        default=None, description="a failed or cancelled run's reason in words, and what to do"
    )
    parent_run_id: str | None = Field(
        default=None, description="a child agent's run: the run that delegated to it"
    )
    children: list[str] = Field(
        default_factory=list,
        description="the child agent runs this run started, oldest first (GET /runs/{id})",
    )


class StartedOut(BaseModel):
    run_id: str
    run: RunOut | None = Field(default=None, description="null if no worker began it yet")


class RunPageOut(BaseModel):
    runs: list[RunOut]
    next_cursor: str | None = None


class EventOut(BaseModel):
    run_id: str
    sequence: int
    position: int = Field(
        description="the event's place in commit order: the SSE id, and what `after` takes"
    )
    kind: EventKind
    round: int
    duration_ms: float | None = None
    payload: dict[str, Any]
    created_at: datetime


class EventPageOut(BaseModel):
    events: list[EventOut]
    next_after: int = Field(description="pass as `after` for the next page (a position)")
    more: bool


class MeOut(BaseModel):
    principal: str
    scopes: list[str] = Field(description="the scopes the token was granted")
    may: list[str] = Field(description="every scope it acts with (admin implies all)")
    profiles: list[str] = Field(
        default_factory=list, description="the profiles it may start: names or glob patterns"
    )


class DecisionOut(BaseModel):
    decided_by: str
    verdict: Literal["approve", "deny"]
    turn_digest: str
    run: RunOut


def run_out(view: RunView, privacy: str, context: PendingContext | None = None) -> RunOut:
    pending = None
    if view.pending_approval is not None:
        p = view.pending_approval
        calls = []
        for c in p.calls:
            kept = filter_payload({"arguments": c.arguments}, privacy)
            calls.append(
                PendingCallOut(
                    call_id=c.call_id,
                    name=c.name,
                    arguments=kept.get("arguments"),
                    arguments_size=kept.get("arguments_size"),
                    effect=view.call_effects.get(c.call_id),
                )
            )
        pending = PendingOut(
            turn_digest=p.turn_digest, round=p.round, requested_at=p.requested_at, calls=calls,
            **(context.texts() if context is not None else {}),
        )  # fmt: skip
    write = None
    if view.pending_effect is not None:
        # Kept at the run's privacy level by the store (store/runs/pending.py). Should the level
        # this body is shown at ever differ from that one, the arguments are withheld.
        pe = view.pending_effect
        write = PendingWriteOut(**pe.model_dump(exclude={"privacy"}))
        if pe.privacy != privacy and write.arguments is not None:
            write.arguments_size, write.arguments = len(write.arguments), None
    data = view.model_dump(exclude={"pending_approval", "pending_effect", "call_effects"})
    return RunOut(
        **data, privacy=privacy, pending_approval=pending, pending_write=write,
        attention=attention(view),
        failure=failure(view.status, view.termination_reason, view.error_type),
    )  # fmt: skip


def event_out(e: EventView) -> EventOut:
    return EventOut(**e.model_dump())
