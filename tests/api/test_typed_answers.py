"""Typed answers end to end, on the fixtures' YAML profile `typed` (a JSON Schema): the
validated object through the Python API, the operator API and A2A (a data part beside
the text); an invalid answer goes back to the model with the schema's error (the scripted
model answers valid JSON only when its latest message carries that error); a model that
never answers valid JSON fails the run, typed."""

from temporalio.client import Client

from agentrt.contracts.enums import EventKind, RunStatus, TerminationReason
from agentrt.contracts.errors import ErrorType
from agentrt.store.runs.record import RunStore
from tests.api.conftest import Live, user_message
from tests.api.ops_helpers import http, name, start, token, wait_status
from tests.security.test_temporal_payloads import _carried_text, _history_text
from tests.workflows._replay import assert_replays, fetch, patches

ORDER = {"order_id": "1042", "total_cents": 4999}


async def test_a_typed_answer_is_retried_with_its_error_then_returned_through_python_and_http(
    live: Live, client: Client
) -> None:
    async with http(live, token(live, name("alice"), "runs:start", "runs:read")) as api:
        run_id = (await start(api, "typed", "the typed total of order 1042?"))["run_id"]
        body = await wait_status(api, run_id, "COMPLETED", "FAILED")
    assert body["status"] == "COMPLETED", body
    assert body["output"] == ORDER
    assert body["iterations"] == 2  # the invalid answer, then the valid one
    assert body["answer"].startswith("```json")  # the text as the model wrote it
    view = await live.runtime.result(run_id)
    assert view.output == ORDER and view.status is RunStatus.COMPLETED
    # The first answer, invalid, is in the transcript; the model's next request carried
    # the schema's error (its rule matched on it) as the latest message.
    transcript = RunStore(live.parts.ctx).transcript(run_id)
    feedback = transcript[-2]
    assert feedback.role == "user"
    assert "does not match the required output schema" in feedback.content
    assert "total_cents: 'lots' is not of type 'integer'" in feedback.content
    # And the run's event at the note's sequence says the same, for the operator.
    [rejected] = [
        e for e in await live.runtime.events(run_id) if e.kind is EventKind.OUTPUT_INVALID
    ]
    assert rejected.payload == {
        "content": "at total_cents: 'lots' is not of type 'integer'",
        "checks": [{"rule": "type", "schema_path": "properties/total_cents/type"}],
    }
    # Its history replays; a run of this build takes the typed-output path with no marker.
    history = await fetch(client, run_id)
    await assert_replays(history)
    assert patches(history.events) == []
    # Temporal holds neither answer nor the schema's error: only that the answer was invalid.
    held = _history_text(history.to_json_dict())
    assert "total_cents" in held  # the schema travels in the plan: the text is readable
    assert "is not of type" not in held and "lots" not in held
    # The valid answer's number, in what the history carries of data (not in its times).
    carried = _carried_text(history.to_json_dict())
    assert "total_cents" in carried  # the plan's payload is read here too
    assert "4999" not in carried


async def test_a_model_that_never_answers_valid_json_fails_the_run_typed(live: Live) -> None:
    run_id = await live.runtime.start("typed", "typed nonsense, please")
    view = await live.runtime.result(run_id)
    assert view.status is RunStatus.FAILED
    assert view.termination_reason is TerminationReason.INVALID_OUTPUT
    assert view.output is None and view.answer is None
    events = await live.runtime.events(run_id)
    llm = [e for e in events if e.kind is EventKind.LLM]
    assert len(llm) == 2  # the answer and one retry (output_retries: 1)
    [failed] = [e for e in events if e.kind is EventKind.RUN_FAILED]
    assert failed.payload["error_type"] == ErrorType.INVALID_OUTPUT.value
    # Each rejected answer is an event saying why; the run's failure, in words, points to
    # the last one: what it says is there.
    rejected = [e for e in events if e.kind is EventKind.OUTPUT_INVALID]
    assert [e.sequence for e in rejected] == [llm[0].sequence + 1, llm[1].sequence + 1]
    for e in rejected:
        assert e.payload["checks"] == [{"rule": "json", "schema_path": ""}]
        assert e.payload["content"].startswith("the answer is not JSON")
    async with http(live, token(live, name("alice"), "runs:read", "runs:read-all")) as api:
        body = (await api.get(f"/runs/{run_id}")).json()
        shown = (await api.get(f"/runs/{run_id}/events")).json()["events"]
    assert "output_invalid event" in body["failure"]["action"]
    assert [e["kind"] for e in shown].count("output_invalid") == 2


async def test_an_a2a_task_of_a_typed_profile_carries_the_object_as_a_data_part(
    live: Live,
) -> None:
    message = user_message("the typed total of order 1042?", metadata={"skill": "typed"})
    reply = await live.rpc("SendMessage", {"message": message})
    task = reply["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
    [artifact] = task["artifacts"]
    text, data = artifact["parts"]
    assert text["text"].startswith("```json")
    # ProtoJSON numbers are doubles: 4999 reads 4999.0, equal in JSON.
    assert data["data"] == ORDER and data["mediaType"] == "application/json"
