"""Issue 41, L3: at privacy (or answer) level `redacted`, a dictionary's keys are redacted as
its values are. A key is text the model or the client wrote: `{"bob@example.com": 1}` as
tool arguments, a typed answer or A2A message metadata kept the address whole before,
where the same address as a value was masked."""

import json
import uuid

from agentrt.contracts.messages import Message, ToolCall
from agentrt.contracts.redaction import TOO_DEEP, redact_tree
from agentrt.contracts.run import TurnRecord
from agentrt.store.a2a.tasks import A2AStore
from agentrt.store.runs.answer import keep_json
from agentrt.store.runs.record import RunStore
from agentrt.store.steps.privacy import filter_payload
from agentrt.store.steps.tools import ToolStep, ToolStepStore
from agentrt.workers.compose import WorkerResources
from tests._runs import begin_run
from tests._snapshots import recorded

EMAIL = "bob.canary@example.com"
KEY = "sk-proj-CANARYabcdefghijklmnop"
SNAPSHOT = recorded("redacted", answer_level="redacted")


def _leaks(value: object) -> list[str]:
    text = json.dumps(value)
    return [s for s in (EMAIL, KEY, "CANARY", "canary") if s in text]


def test_redact_tree_masks_keys_and_keeps_colliding_keys_apart() -> None:
    tree = {EMAIL: {KEY: [EMAIL]}, "other@example.com": 2, "n": 3, "***": 4}
    out = redact_tree(tree, max_chars=None)
    assert not _leaks(out), out
    assert len(out) == len(tree)  # no key overwrote another
    assert out["n"] == 3 and sorted(out.values(), key=str)[-1] == {"[REDACTED]": ["***"]}
    deep: object = "x"
    for _ in range(200):
        deep = {EMAIL: deep}
    assert TOO_DEEP in json.dumps(redact_tree(deep)) and not _leaks(redact_tree(deep))


def test_an_events_tool_arguments_are_redacted_keys_and_all(parts: WorkerResources) -> None:
    runs = RunStore(parts.ctx)
    run_id = begin_run(parts.ctx, snapshot=SNAPSHOT, privacy="redacted")
    call = ToolCall(call_id="c1", name="send_mail", arguments={EMAIL: {KEY: "x"}, "n": 1})
    turn = Message(role="assistant", content="sending", tool_calls=[call])
    runs.record_turn(run_id, TurnRecord(1, 1, turn, {"content": turn.content,
                     "tool_calls": [call.model_dump()]}, 1.0, "redacted"))  # fmt: skip
    ToolStepStore(parts.ctx).record(ToolStep(
        run_id=run_id, sequence=2, round=1, call=call, effect="read",
        content="sent", is_error=False, privacy="redacted", idempotency_key=None,
    ))  # fmt: skip
    events = runs.events(run_id)
    assert len(events) == 3
    for event in events:
        assert not _leaks(event.payload), event.payload
    assert events[2].payload["arguments"] == {"***": {"[REDACTED]": "x"}, "n": 1}


def test_a_pending_calls_arguments_and_a_typed_answer_are_redacted_keys_and_all() -> None:
    level = "redacted"
    kept = filter_payload({"arguments": {EMAIL: 1}, "tool": "send_mail"}, level)
    assert not _leaks(kept) and kept["tool"] == "send_mail"
    answer = {"to": {EMAIL: "yes"}, KEY: [1, 2]}
    stored = keep_json(answer, level)
    assert not _leaks(stored), stored
    assert stored["to"] == {"***": "yes"}


def test_an_a2a_messages_metadata_is_redacted_in_the_history_at_redacted(
    parts: WorkerResources,
) -> None:
    task_id = str(uuid.uuid4())
    message = {
        "messageId": str(uuid.uuid4()),
        "role": "ROLE_USER",
        "parts": [{"text": f"mail {EMAIL}"}],
        "metadata": {EMAIL: KEY, "skill": "p"},
    }
    rec = A2AStore(parts.ctx).create(
        task_id=task_id, context_id=str(uuid.uuid4()), workflow_id=str(uuid.uuid4()),
        owner="alice", profile="p", answer_level="redacted", message=message,
    )  # fmt: skip
    assert not _leaks(rec.history), rec.history
    assert rec.history[0]["metadata"] == {"***": "[REDACTED]", "skill": "p"}
