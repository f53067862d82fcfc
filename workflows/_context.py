"""The mutable state of one run inside the workflow, shared by the loop and the handlers."""

import asyncio
from dataclasses import dataclass, field
from typing import Any

from temporalio import workflow
from temporalio.common import SearchAttributeKey
from temporalio.exceptions import ApplicationError

from agentrt.workflows._details import Details
from agentrt.workflows._loop import LoopState
from agentrt.workflows.budget import Ledger, Reservation
from agentrt.workflows.patches import Patches
from agentrt.workflows.pauses_gate import ApprovalGate, InputPause, ReconcileGate

with workflow.unsafe.imports_passed_through():
    from agentrt.contracts.approval import CancelRequest, DecisionRefusal
    from agentrt.contracts.deferred import DeferredStep
    from agentrt.contracts.enums import RunStatus, TerminationReason
    from agentrt.contracts.ids import SA_PROFILE, SA_RUN_STATUS
    from agentrt.contracts.messages import Usage
    from agentrt.contracts.plan import RunPlan
    from agentrt.contracts.profiles import PrivacyLevel
    from agentrt.contracts.run import Transition

MAX_REFUSALS_KEPT = 20
# The run's search attributes, for every workflow that sets them (a fire's child start too).
STATUS_KEY = SearchAttributeKey.for_keyword(SA_RUN_STATUS)
PROFILE_KEY = SearchAttributeKey.for_keyword(SA_PROFILE)


@dataclass
class RunContext:
    run_id: str = ""
    task_id: str | None = None  # the A2A task this run serves, if any
    plan: RunPlan | None = None
    state: LoopState = field(default_factory=LoopState)
    gate: ApprovalGate = field(default_factory=ApprovalGate)
    refused: list[DecisionRefusal] = field(default_factory=list)  # the last MAX_REFUSALS_KEPT
    cancel: CancelRequest | None = None
    input: InputPause = field(default_factory=InputPause)
    reconcile: ReconcileGate = field(default_factory=ReconcileGate)
    finished: bool = False
    details: Details = field(default_factory=Details)  # Temporal Web's current details
    begin_failure: ApplicationError | None = None  # why the run row was never written
    # Which patches the run asks Temporal about (workflows/patches.py): set as it starts.
    patches: Patches = field(default_factory=Patches)
    # The completion a model activity made on its answer, and the reason it ended with.
    settled: Transition | None = None
    answer_reason: TerminationReason | None = None
    # A typed answer's schema in force (workflows/settle.py: typed_output), and how
    # many invalid answers may still go back to the model.
    output_schema: dict[str, Any] | None = None
    output_retries: int = 0
    # Long runs (workflows/segments.py): this history segment's number and first round,
    # and the invalid answers still allowed as the segment before left them.
    segment: int = 1
    segment_first_round: int = 1
    carried_retries: int | None = None
    # The budget's ledger (workflows/budget.py), opened as the loop starts, and whether its
    # model calls reserve their worst case first (a run with a budget, on this build).
    ledger: Ledger = field(default_factory=Ledger)
    reserving: bool = False
    # The turn's delegations that have yet to take their share of the budget (_group.py).
    delegations_left: int = 0
    # The tree of runs (workflows/children.py): this run's depth (0: a client's run) and
    # how many child runs it started.
    depth: int = 0
    children: int = 0
    # Reads whose steps ride with the next model call (workflows/riding.py), and whether
    # the round running now defers its reads.
    deferred: list[DeferredStep] = field(default_factory=list)
    defer_reads: bool = False

    def require_plan(self) -> RunPlan:
        assert self.plan is not None, "the run has not begun"
        return self.plan

    @property
    def privacy(self) -> PrivacyLevel:
        """The run's privacy level, for the activities' requests (once it began)."""
        return self.require_plan().privacy

    def spend(self, reservation: Reservation | None, actual: Usage) -> None:
        """A spend, into the ledger (settling its reservation, if it took one) and the
        run's totals: the one way usage is added up once the loop started."""
        if reservation is None:
            self.state.usage = self.ledger.record(actual)
        else:
            self.state.usage = self.ledger.settle(reservation, actual)

    def note_refusal(self, refusal: DecisionRefusal) -> None:
        """Keep a refused decision for its sender (the `refused_decisions` query)."""
        self.refused = [*self.refused, refusal][-MAX_REFUSALS_KEPT:]

    def cancel_requested(self) -> bool:
        return self.cancel is not None or workflow.cancellation_reason() is not None

    def check_cancel(self) -> None:
        """Boundaries re-check: an activity that completed in the same activation as the
        cancel request (or an in-flight write) may have absorbed the cancellation."""
        if self.cancel_requested():
            raise asyncio.CancelledError()


def set_status(status: RunStatus) -> None:
    """Mirror the run status into a search attribute (never user content)."""
    workflow.upsert_search_attributes([STATUS_KEY.value_set(status.value)])


def started_running() -> bool:
    """Whether the run was started with the status RUNNING already set (the facade does
    since 0.3.1). Read from the start event, so replay takes the same branch: runs
    started without it upsert RUNNING once they begin, as they always did."""
    return workflow.info().typed_search_attributes.get(STATUS_KEY) == RunStatus.RUNNING.value


def clear_status() -> None:
    """A run that never began has no status: remove the one its start set."""
    workflow.upsert_search_attributes([STATUS_KEY.value_unset()])
