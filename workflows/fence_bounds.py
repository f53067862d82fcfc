"""How often a fenced write may be scheduled again, and why it stops (workflows/fence.py).
Pure: unit-tested without Temporal (tests/fence/test_fence_bounds.py).

Two separate bounds, each with the reason it ends a run in:
- a write no worker claimed (its fence was still stamped: nothing ran) is scheduled again
  under a fresh fence, up to MAX_UNCLAIMED_SCHEDULES schedules never claimed; then the run
  fails TOOL_FAILED WriteNeverClaimed;
- a write interrupted after its claim that its probe or a person found not applied runs
  again, up to MAX_REEXECUTIONS times; then the run fails TOOL_FAILED
  WriteReexecutionsSpent (every execution was found not applied: nothing of it applied).

Builds before these bounds counted both together (MAX_WRITE_SCHEDULES, five schedules,
then INTERNAL_ERROR WriteNeverStarted). A run is asked the `fence-bounds` patch only where
the two rules part (`Schedules.parting`): a run that began on such a build and met the old
bound in its history replays its old path; any other run records no marker.
"""

from dataclasses import dataclass

from agentrt.contracts.errors import ErrorType

# The bound of builds before the separate ones: schedules of any kind, per write.
MAX_WRITE_SCHEDULES = 5
MAX_UNCLAIMED_SCHEDULES = 5
MAX_REEXECUTIONS = 5
FENCE_BOUNDS = "fence-bounds"


@dataclass
class Schedules:
    """One write's schedules so far, by what became of them."""

    scheduled: int = 0  # stamped and scheduled (each with a fresh fence)
    unclaimed: int = 0  # ... of which no worker claimed
    not_applied: int = 0  # ... of which were interrupted and found not applied

    def stop(self) -> ErrorType | None:
        """Why the write may not be scheduled again (None: it may), by the separate bounds."""
        if self.unclaimed >= MAX_UNCLAIMED_SCHEDULES:
            return ErrorType.WRITE_NEVER_CLAIMED
        if self.not_applied > MAX_REEXECUTIONS:
            return ErrorType.WRITE_REEXECUTIONS_SPENT
        return None

    def stop_before(self) -> bool:
        """Whether the combined bound of earlier builds stops the write here."""
        return self.scheduled >= MAX_WRITE_SCHEDULES

    def parting(self) -> bool:
        """Whether the two rules decide differently now: only then is the patch asked."""
        return (self.stop() is not None) != self.stop_before()
