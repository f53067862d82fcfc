"""The fenced write's two bounds (workflows/fence_bounds.py), pure: never-claimed
reschedules and re-executions after "not applied" are counted apart, each ending in its own
reason; where they and the combined bound of earlier builds decide alike, no patch is
asked. In a real run: test_reconcile_bounds.py."""

from agentrt.contracts.errors import ErrorType
from agentrt.workflows.fence_bounds import (
    MAX_REEXECUTIONS,
    MAX_UNCLAIMED_SCHEDULES,
    MAX_WRITE_SCHEDULES,
    Schedules,
)


def _after(*found: str) -> Schedules:
    """The schedules after writes that ended so: "unclaimed" or "not_applied" each."""
    s = Schedules()
    for what in found:
        s.scheduled += 1
        if what == "unclaimed":
            s.unclaimed += 1
        else:
            s.not_applied += 1
    return s


def test_a_write_claimed_three_times_and_never_claimed_twice_goes_on() -> None:
    """Issue 40: claimed 2-3 times, with never-claimed schedules between, the combined
    bound ended it internal_error WriteNeverStarted; the separate bounds let it go on."""
    s = _after("not_applied", "unclaimed", "not_applied", "unclaimed", "not_applied")
    assert s.stop() is None
    assert s.stop_before()  # the earlier builds' bound would have stopped here
    assert s.parting()  # so the patch is asked, here only


def test_never_claimed_schedules_end_in_their_own_reason() -> None:
    s = _after(*["unclaimed"] * (MAX_UNCLAIMED_SCHEDULES - 1))
    assert s.stop() is None
    s = _after(*["unclaimed"] * MAX_UNCLAIMED_SCHEDULES)
    assert s.stop() is ErrorType.WRITE_NEVER_CLAIMED


def test_re_executions_end_in_their_own_reason() -> None:
    s = _after(*["not_applied"] * MAX_REEXECUTIONS)
    assert s.stop() is None  # each re-execution allowed: MAX_REEXECUTIONS of them
    s = _after(*["not_applied"] * (MAX_REEXECUTIONS + 1))
    assert s.stop() is ErrorType.WRITE_REEXECUTIONS_SPENT


def test_no_patch_is_asked_where_both_rules_agree() -> None:
    for n in range(1, MAX_WRITE_SCHEDULES):
        assert not _after(*["not_applied"] * n).parting()
        assert not _after(*["unclaimed"] * n).parting()
    # Both stop at the fifth never-claimed schedule: no patch, the new reason.
    five = _after(*["unclaimed"] * MAX_WRITE_SCHEDULES)
    assert five.stop_before() and five.stop() is ErrorType.WRITE_NEVER_CLAIMED
    assert not five.parting()
