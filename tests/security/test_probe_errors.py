"""A reconcile probe's exception text may quote the target system (a host, a token): it
stays in the worker's log and never reaches Temporal history or the run's records."""

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from google.protobuf.json_format import MessageToJson
from temporalio.api.enums.v1 import EventType, RetryState
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client

from agentrt import Reconciled, RunStatus, Settings
from agentrt.contracts.ids import ACT_WRITE_RECONCILE
from tests.fence.test_reconcile import Target, _applies_then_raises, _pay

SECRET = "hunter2-probe-secret"


async def test_a_failing_probe_leaks_nothing_into_history_or_events(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    target = Target()

    def probe(key: str, arguments: dict[str, Any]) -> Reconciled:
        target.probes.append(key)
        raise ConnectionError(f"https://payments.internal/?token={SECRET} refused")

    paid = await _pay(client, settings, tmp_path, target, _applies_then_raises, probe)
    view, events = paid.view, paid.events
    # Five attempts at most (the tool call's retry policy); fewer reach the probe when the
    # server loses one to a timeout under load, which this test is not about. That the run
    # failed only once every attempt was spent is the history's word, below.
    assert view.status is RunStatus.FAILED and 1 <= len(target.probes) <= 5
    history = await client.get_workflow_handle(view.run_id).fetch_history()
    assert _probe_retries_spent(history.events)
    text = "".join(MessageToJson(e) for e in history.events)
    assert "ProbeFailed" in text  # the typed failure is there
    assert SECRET not in text and "payments.internal" not in text
    assert all(SECRET not in str(e.payload) for e in events)


def _probe_retries_spent(events: Sequence[HistoryEvent]) -> bool:
    """The write.reconcile activity, allowed five attempts, closed (failed, or its last
    attempt timed out) with all five spent."""
    [(probe, allowed)] = [
        (e.event_id, e.activity_task_scheduled_event_attributes.retry_policy.maximum_attempts)
        for e in events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
        and e.activity_task_scheduled_event_attributes.activity_type.name == ACT_WRITE_RECONCILE
    ]
    assert allowed == 5, allowed
    # An event's unset attributes read as empty (scheduled_event_id 0): only the probe's
    # closing event matches.
    closed = [
        a.retry_state
        for e in events
        for a in (
            e.activity_task_failed_event_attributes,
            e.activity_task_timed_out_event_attributes,
        )
        if a.scheduled_event_id == probe
    ]
    return closed == [RetryState.RETRY_STATE_MAXIMUM_ATTEMPTS_REACHED]
