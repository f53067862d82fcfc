"""Names that cross process boundaries. Frozen: renaming one breaks in-flight runs."""

from typing import Final

DEFAULT_TASK_QUEUE: Final = "agent-runs"

WORKFLOW_AGENT_RUN: Final = "AgentRun"
# Maintenance: the retention pass a Temporal Schedule starts on its own queue.
WORKFLOW_RETENTION: Final = "Retention"
SCHEDULE_RETENTION: Final = "agentrt-retention"
DEFAULT_MAINTENANCE_QUEUE: Final = "agentrt-maintenance"
# Scheduled runs (issue 44): a Temporal Schedule of runs starts one of these per fire, on
# the run's queue; it starts the run as its child under a run id derived from the schedule
# and the fire's scheduled time (contracts/schedules.py `fire_run_id`).
WORKFLOW_SCHEDULED_FIRE: Final = "ScheduledFire"

# Activities. One name per I/O point of the loop; never rename once shipped.
ACT_RUN_BEGIN: Final = "run.begin"
# Retired with the pre-0.3.0 completion step (the model activity completes a run): the
# name stays reserved, never to be reused for another activity.
ACT_RUN_COMPLETE: Final = "run.complete"
RETIRED_ACTIVITIES: Final = frozenset({ACT_RUN_COMPLETE})
# Settles a run FAILED or CANCELLED (activities/settle): shipped as "run.fail", frozen.
ACT_RUN_SETTLE: Final = "run.fail"
ACT_RUN_SUSPEND: Final = "run.suspend"
ACT_RUN_RESUME: Final = "run.resume"
ACT_POLICY_DECIDE: Final = "policy.decide"  # an approval policy judges a turn
ACT_RUN_APPROVE_PARTLY: Final = "run.approve_partly"  # one of N people approved
ACT_RUN_AWAIT_INPUT: Final = "run.await_input"
ACT_RUN_ADD_INPUT: Final = "run.add_input"
ACT_A2A_PROJECT: Final = "a2a.project"
ACT_MODEL_COMPLETE: Final = "model.complete"
ACT_TOOL_EXECUTE: Final = "tool.execute"
ACT_TOOL_REFUSE: Final = "tool.refuse"
# Reads whose steps rode with no model call (the run left its loop first): recorded alone.
ACT_TOOL_RECORD_DEFERRED: Final = "tool.record_deferred"
ACT_FENCE_STAMP: Final = "fence.stamp"
ACT_FENCE_RESOLVE: Final = "fence.resolve"
ACT_WRITE_EXECUTE: Final = "write.execute"
# Asks a write's reconcile probe what became of an interrupted call (a read, retried).
ACT_WRITE_RECONCILE: Final = "write.reconcile"
# A write's target told to stop waiting for an answer: the run that asked was cancelled.
ACT_WRITE_WITHDRAW: Final = "write.withdraw"
# A write with no answer on its outcome, in `ask` mode: the run waits for a person
# (RUNNING -> AWAITING_RECONCILIATION), then records their answer (-> RUNNING).
ACT_RUN_AWAIT_RECONCILE: Final = "run.await_reconciliation"
ACT_RUN_RECONCILED: Final = "run.reconciled"
# A delegation to a child agent (workflows/children.py): its result recorded as the
# parent's tool result, and a child started before (a reset parent) awaited.
ACT_CHILD_RECORD: Final = "child.record"
ACT_CHILD_AWAIT: Final = "child.await"
ACT_RETENTION_STALE: Final = "retention.stale_waiting"
ACT_RETENTION_CANCEL: Final = "retention.cancel"
ACT_RETENTION_UNSETTLED: Final = "retention.unsettled"
ACT_RETENTION_PURGE: Final = "retention.purge"

# Signals, updates, queries of the AgentRun workflow.
SIGNAL_APPROVE: Final = "approve"
SIGNAL_CANCEL: Final = "cancel"
UPDATE_DECIDE: Final = "decide"
UPDATE_SUBMIT_INPUT: Final = "submit_input"
UPDATE_RECONCILE: Final = "reconcile"  # a person's answer on an interrupted write
# Any of the three above (contracts/answers.py `PauseAnswer`): the one path they all take.
UPDATE_ANSWER: Final = "answer"
UPDATE_BEGUN: Final = "begun"  # answers once the run row exists (or why it never will)
QUERY_PENDING_APPROVAL: Final = "pending_approval"
QUERY_REFUSED_DECISIONS: Final = "refused_decisions"
QUERY_BUDGET: Final = "budget"  # the ledger: spent, reserved, room (contracts/budget.py)

# Search attribute keys (never user content).
SA_RUN_STATUS: Final = "AgentRunStatus"
SA_PROFILE: Final = "AgentProfile"
# The memo key naming who started a run (its STARTING view reads it before a row exists).
MEMO_INITIATOR: Final = "initiator"
# Temporal's own, set on every workflow a Schedule starts (a trigger and a backfill too).
SA_SCHEDULED_START_TIME: Final = "TemporalScheduledStartTime"


def idempotency_key(run_id: str, call_id: str) -> str:
    """Deterministic key of one tool call: stable across retries, replays and resets."""
    return f"{run_id}/{call_id}"
