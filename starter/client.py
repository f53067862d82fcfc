"""`RuntimeClient`: what every agentrt client offers, in process (`AgentRuntime`, the
facade) or over HTTP (`ApiRuntime`, the operator API as a token's principal). Code that
drives runs (the CLI's commands, the renderers) is written against it, so either serves.

Through the API the token's principal acts: `approve`'s `decided_by` and `attestation`
and `cancel`'s `by` are not sent (the API names the principal), and a start with an
`initiator` is refused (InvalidRequestError)."""

from typing import Protocol

from agentrt.contracts.run import EventView, RunView
from agentrt.contracts.start import StartRequest


class RuntimeClient(Protocol):
    async def start(
        self,
        profile: str,
        prompt: str,
        *,
        max_iterations: int | None = None,
        initiator: str | None = None,
        run_id: str | None = None,
    ) -> str:
        """Start a run; its uuid once the run exists."""
        ...

    async def submit(self, request: StartRequest, *, initiator: str | None = None) -> str:
        """Start the run a validated `StartRequest` asks for; its uuid."""
        ...

    async def status(self, run_id: str) -> RunView:
        """The run as stored now."""
        ...

    async def result(self, run_id: str) -> RunView:
        """The run once it has ended (it may wait for a decision meanwhile)."""
        ...

    async def events(self, run_id: str, after_sequence: int = -1) -> list[EventView]:
        """The run's events after `after_sequence`, in order."""
        ...

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
        """Approve (or, with `approved=False`, deny) the pending turn `turn_digest`."""
        ...

    async def cancel(self, run_id: str, *, by: str, reason: str | None = None) -> None:
        """Ask the run to cancel; one that ended stays as it ended."""
        ...

    async def inbox(self, limit: int = 50) -> list[RunView]:
        """Runs waiting for approval, oldest first."""
        ...
