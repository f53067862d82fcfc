"""The JSON log format: the run's ids as fields, from the activity and workflow loggers."""

import json
import logging

from agentrt.core.logs import JsonFormatter


def _record(**extra: object) -> logging.LogRecord:
    record = logging.LogRecord(
        "temporalio.workflow", logging.WARNING, "f.py", 1, "m %s", ("x",), None
    )
    record.__dict__.update(extra)
    return record


def test_a_workflow_line_carries_the_run_and_workflow_ids() -> None:
    wf = {"workflow_id": "run-1", "run_id": "temporal-7", "workflow_type": "AgentRun",
          "task_queue": "q", "attempt": 1, "namespace": "default"}  # fmt: skip
    line = json.loads(JsonFormatter().format(_record(temporal_workflow=wf)))
    assert line["run_id"] == line["workflow_id"] == "run-1"
    assert line["workflow_run_id"] == "temporal-7"
    assert line["workflow_type"] == "AgentRun" and line["message"] == "m x"
    assert line["level"] == "WARNING" and line["logger"] == "temporalio.workflow"


def test_an_activity_line_carries_the_run_and_activity() -> None:
    act = {
        "workflow_id": "run-2",
        "workflow_run_id": "temporal-8",
        "activity_type": "tool.execute",
        "activity_id": "5",
        "attempt": 2,
    }
    line = json.loads(JsonFormatter().format(_record(temporal_activity=act)))
    assert (line["run_id"], line["workflow_run_id"]) == ("run-2", "temporal-8")
    assert line["activity_type"] == "tool.execute" and line["attempt"] == 2


def test_a_line_outside_temporal_code_has_no_run_fields() -> None:
    line = json.loads(JsonFormatter().format(_record()))
    assert "run_id" not in line and "workflow_id" not in line
