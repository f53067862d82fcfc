"""`RuntimeClient`: what every agentrt client offers, in process (`AgentRuntime`, the
facade) or over HTTP (`ApiRuntime`, the operator API as a token's principal). Code that
drives runs (the CLI's commands, the renderers) is written against it, so either serves.
Both clients derive from it, so each public signature is written once, here.

Through the API the token's principal acts: `approve`'s `decided_by` and `attestation`
and `cancel`'s `by` are not sent (the API names the principal), and a start with an
`initiator` is refused (InvalidRequestError)."""

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator

from agentrt.contracts.approval import ApprovalDecision
from agentrt.contracts.live import LiveDelta
from agentrt.contracts.profiles import MAX_ITERATIONS_CEILING
from agentrt.contracts.reconcile_answer import (
    Answer,
    ReconcileAnswer,
    Resolved,
    Then,
    WriteResolution,
)
from agentrt.contracts.start import StartRequest, StartWait
from agentrt.contracts.views import EventView, RunView
from agentrt.starter._deciding import checked_decision
from agentrt.starter._reconciling import checked_answer, checked_resolution
from agentrt.store.sealing import Sealer


class RuntimeClient(ABC):
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
    def follow(self, run_id: str) -> AsyncIterator[EventView | LiveDelta]:
        """The run as it happens, until it ends: its committed events and the live output
        of its model calls (`LiveDelta`: text as it is written, or a `retract` of the text
        a retried call had shown), in order (see starter/live.py)."""

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
        """Approve (or, with `approved=False`, deny) the pending turn `turn_digest`. An
        invalid decision is refused (InvalidRequestError) before anything is sent; a client
        holding the store's seal key attests `decided_by` itself (store/attest.py) unless
        given an attestation. Returns the run once the decision is on record."""
        key = self._attestation_key()
        decision = checked_decision(
            approved=approved,
            decided_by=decided_by,
            turn_digest=turn_digest,
            reason=reason,
            attestation=attestation,
            attest_with=(key, run_id) if key is not None else None,
        )
        return await self._decide(run_id, decision)

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
        (AWAITING_RECONCILIATION): `applied` with `result`, the text the model sees;
        `not_applied`, `then` retry (a fresh fence, the same idempotency key) or error (the
        model gets `result`, or a default, as an error); `give_up` (FAILED
        interrupted_write). `call_id` and `fence` are the run view's pending write's: an
        answer for another fence is refused (StaleReconciliationError), as is a second one
        (AlreadyReconciledError). Returns the run once the answer is on record."""
        key = self._attestation_key()
        checked = checked_answer(
            (key, run_id) if key is not None else None,
            call_id=call_id, fence=fence, answer=answer, answered_by=answered_by,
            result=result, then=then, reason=reason,
        )  # fmt: skip
        return await self._reconcile(run_id, checked)

    @abstractmethod
    async def _reconcile(self, run_id: str, answer: ReconcileAnswer) -> RunView:
        """Send the checked `answer`; the run once it is on record."""

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
        `call_id` and `fence`): `applied` or `not_applied`, with `note` (audited: what was
        checked, where). Nothing runs again; the run leaves "Needs attention". Refused with
        a typed ResolutionError, changing nothing: the run has no such write
        (NothingToResolveError), or another one (StaleResolutionError)."""
        key = self._attestation_key()
        checked = checked_resolution(
            (key, run_id) if key is not None else None,
            call_id=call_id, fence=fence, outcome=outcome, resolved_by=resolved_by, note=note,
        )  # fmt: skip
        return await self._resolve(run_id, checked)

    @abstractmethod
    async def _resolve(self, run_id: str, resolution: WriteResolution) -> RunView:
        """Record the checked `resolution`; the run as it is then."""

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

    @abstractmethod
    async def _decide(self, run_id: str, decision: ApprovalDecision) -> RunView:
        """Send the checked `decision` on the run's pending turn; the run once on record."""
