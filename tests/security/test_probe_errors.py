"""A reconcile probe's exception text may quote the target system (a host, a token): it
stays in the worker's log and never reaches Temporal history or the run's records."""

from pathlib import Path
from typing import Any

from google.protobuf.json_format import MessageToJson
from temporalio.client import Client

from agentrt import Reconciled, RunStatus, Settings
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
    # server loses one to a timeout under load, which this test is not about.
    assert view.status is RunStatus.FAILED and 1 <= len(target.probes) <= 5
    history = await client.get_workflow_handle(view.run_id).fetch_history()
    text = "".join(MessageToJson(e) for e in history.events)
    assert "ProbeFailed" in text  # the typed failure is there
    assert SECRET not in text and "payments.internal" not in text
    assert all(SECRET not in str(e.payload) for e in events)
