"""`RuntimeClient`: what every agentrt client offers, in process (`AgentRuntime`, the
facade) or over HTTP (`ApiRuntime`, the operator API as a token's principal). Code that
drives runs (the CLI's commands, the renderers) is written against it, so either serves.
Both clients derive from it, so each public signature is written once, here.

Every answer a person gives a run (a decision, a follow-up, an answer on an interrupted
write, a resolution) goes by one method, `answer`; `approve`, `reconcile` and `resolve`
are thin wrappers that build the typed answer (contracts/answers.py).

Through the API the token's principal acts: an answer's author (`decided_by`, ...) and
attestation and `cancel`'s `by` are not sent (the API names the principal), and a start
with an `initiator` is refused (InvalidRequestError)."""

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator

from agentrt.contracts.answers import RunAnswer
from agentrt.contracts.approval import REASON_REQUIRED, ApprovalDecision, reason_missing
from agentrt.contracts.budget import BudgetState
from agentrt.contracts.errors import ReasonRequiredError
from agentrt.contracts.live import LiveDelta
from agentrt.contracts.profiles import MAX_ITERATIONS_CEILING
from agentrt.contracts.reconcile_answer import Answer, Resolved, Then
from agentrt.contracts.start import StartRequest, StartWait
from agentrt.contracts.views import EventView, RunView
from agentrt.starter._deciding import checked_decision
from agentrt.starter._reconciling import checked_answer, checked_resolution
from agentrt.store.db.sealing import Sealer
from agentrt.store.security.attest import attest_statement


class RuntimeClient(ABC):
    """What every agentrt client offers: start, read, decide on and cancel runs."""

    @property
    @abstractmethod
    def max_prompt_chars(self) -> int:
        """The longest prompt `start` lets through before anything is sent."""

    @property
    def max_iterations_ceiling(self) -> int:
        """The most rounds `start` lets a run ask for (AGENTRT_MAX_ITERATIONS_CEILING)."""
        return MAX_ITERATIONS_CEILING

    async def start(
        self,
        profile: str,
        prompt: str,
        *,
        max_iterations: int | None = None,
        initiator: str | None = None,
        run_id: str | None = None,
        wait: StartWait = "begun",
    ) -> str:
        """Start a run; its uuid once a worker has begun it (`wait="begun"`), or once
        Temporal holds it (`wait="accepted"`: status STARTING until a worker begins it).
        Bad input (InvalidRequestError, PromptTooLongError) is refused before anything is
        sent. A begun-start no worker began within the bound is withdrawn: NoWorkerError,
        or WorkersBusyError when workers poll but none began it in time."""
        fields = {"profile": profile, "prompt": prompt, "max_iterations": max_iterations}
        request = StartRequest.checked(
            self.max_prompt_chars,
            {**fields, "run_id": run_id},
            max_iterations_ceiling=self.max_iterations_ceiling,
        )
        return await self.submit(request, initiator=initiator, wait=wait)

    @abstractmethod
    async def submit(
        self, request: StartRequest, *, initiator: str | None = None, wait: StartWait = "begun"
    ) -> str:
        """Start the run a validated `StartRequest` asks for; its uuid."""

    @abstractmethod
    async def status(self, run_id: str) -> RunView:
        """The run as stored now."""

    @abstractmethod
    async def result(self, run_id: str) -> RunView:
        """The run once it has ended (it may wait for a decision meanwhile)."""

    @abstractmethod
    async def events(self, run_id: str, after_position: int = -1) -> list[EventView]:
        """The run's events committed after the one at `after_position` (an EventView's
        `position`), in commit order: paging by it misses none and repeats none."""

    @abstractmethod
    async def budget(self, run_id: str) -> BudgetState:
        """The run's budget as its workflow holds it: limits, spend, what its calls in
        flight reserved, and the room left."""

    @abstractmethod
    def follow(self, run_id: str) -> AsyncIterator[EventView | LiveDelta]:
        """The run as it happens, until it ends: its committed events and the live output
        of its model calls (`LiveDelta`: text as it is written, or a `retract` of the text
        a retried call had shown), in order (see starter/live.py)."""

    async def answer(self, run_id: str, answer: RunAnswer) -> RunView:
        """Give the run an answer (contracts/answers.py): an `ApprovalDecision` on its
        pending turn, an `InputMessage` it waits for, a `ReconcileAnswer` on the write it
        waits on, or a `WriteResolution` of the unknown write it ended with. The one path
        of every answer: `approve`, `reconcile`, `resolve` (and the facade's
        `submit_input`) build one and call this. A denial without a reason is refused
        (ReasonRequiredError) before anything is sent; a client holding the store's seal
        key attests the answer's author itself (store/security/attest.py: each kind under its own
        seal) unless the answer brings an attestation. Through the API the token's
        principal is the author, whatever the answer names. Returns the run once the
        answer is on record; a refusal raises the kind's typed error (ApprovalError,
        InputError, ReconcileError, ResolutionError), changing nothing."""
        if isinstance(answer, ApprovalDecision) and reason_missing(answer.approved, answer.reason):
            raise ReasonRequiredError(REASON_REQUIRED)
        key = self._attestation_key()
        if key is not None and answer.attestation is None:
            seal = attest_statement(key, run_id, answer)
            answer = answer.model_copy(update={"attestation": seal})
        return await self._answer(run_id, answer)

    @abstractmethod
    async def _answer(self, run_id: str, answer: RunAnswer) -> RunView:
        """Send the checked (and, where this client can, attested) `answer`; the run once
        it is on record."""

    async def approve(
        self,
        run_id: str,
        *,
        approved: bool,
        decided_by: str,
        turn_digest: str,
        reason: str | None = None,
        attestation: str | None = None,
    ) -> RunView:
        """Approve (or, with `approved=False`, deny) the pending turn `turn_digest`: `answer`
        with an `ApprovalDecision`. An invalid decision is refused (InvalidRequestError)
        before anything is sent."""
        decision = checked_decision(
            approved=approved, decided_by=decided_by, turn_digest=turn_digest, reason=reason,
            attestation=attestation,
        )  # fmt: skip
        return await self.answer(run_id, decision)

    async def reconcile(
        self,
        run_id: str,
        *,
        call_id: str,
        fence: str,
        answer: Answer,
        answered_by: str,
        result: str | None = None,
        then: Then = "retry",
        reason: str | None = None,
    ) -> RunView:
        """Say what the target system shows of the write the run waits on
        (AWAITING_RECONCILIATION): `answer` with a `ReconcileAnswer`. `applied` with
        `result`, the text the model sees; `not_applied`, `then` retry (a fresh fence, the
        same idempotency key) or error (the model gets `result`, or a default, as an
        error); `give_up` (FAILED interrupted_write). `call_id` and `fence` are the run
        view's pending write's: an answer for another fence is refused
        (StaleReconciliationError), as is a second one (AlreadyReconciledError)."""
        checked = checked_answer(
            call_id=call_id, fence=fence, answer=answer, answered_by=answered_by,
            result=result, then=then, reason=reason,
        )  # fmt: skip
        return await self.answer(run_id, checked)

    async def resolve(
        self,
        run_id: str,
        *,
        call_id: str,
        fence: str,
        outcome: Resolved,
        resolved_by: str,
        note: str,
    ) -> RunView:
        """Record what the target system showed of the write of a run that ENDED with its
        outcome unknown (FAILED interrupted_write: the run view's pending write, its
        `call_id` and `fence`): `answer` with a `WriteResolution`. `applied` or
        `not_applied`, with `note` (audited: what was checked, where). Nothing runs again;
        the run leaves "Needs attention". Refused with a typed ResolutionError, changing
        nothing: the run has no such write (NothingToResolveError), or another one
        (StaleResolutionError)."""
        checked = checked_resolution(
            call_id=call_id, fence=fence, outcome=outcome, resolved_by=resolved_by, note=note
        )
        return await self.answer(run_id, checked)

    @abstractmethod
    async def cancel(self, run_id: str, *, by: str, reason: str | None = None) -> None:
        """Ask the run to cancel; one that ended stays as it ended."""

    @abstractmethod
    async def inbox(self, limit: int = 50) -> list[RunView]:
        """Runs waiting for approval, oldest first."""

    @abstractmethod
    async def attention(self, limit: int = 50) -> list[RunView]:
        """Runs that need an operator: waiting for an answer on a write whose outcome is
        unknown, or failed with one; the most recently changed first."""

    def _attestation_key(self) -> Sealer | None:
        """The seal key this client attests its deciders with; None: it attests none."""
        return None
