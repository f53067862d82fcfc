"""A typed answer from a profile written in Python with a pydantic model, on the
OpenAI-compatible provider against a local HTTP server: each request asks for the schema
natively (`response_format`), an invalid answer goes back to the model with the schema's
error in its next request, and the valid one is the run's output. Each rejected answer is
an `output_invalid` event, kept at the run's privacy level (issue 40 item 4)."""

import uuid
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from pydantic import BaseModel
from temporalio.client import Client

from agentrt import AgentRuntime, Profile, RunStatus, Settings, build_worker
from agentrt.activities.providers.openai_compat import OpenAICompatProvider
from agentrt.contracts.enums import EventKind, TerminationReason
from agentrt.contracts.views import EventView
from agentrt.store.runs.record import RunStore
from tests.activities import test_openai_provider as openai_tests
from tests.activities.test_openai_provider import Canned, FakeServer, completion, tool_call

server = openai_tests.server  # the module's local server, a fixture


class Invoice(BaseModel):
    customer: str
    total_cents: int


class Typed(NamedTuple):
    profile: Profile
    status: RunStatus
    reason: TerminationReason | None
    output: object
    events: list[EventView]


async def _typed_run(
    client: Client,
    settings: Settings,
    tmp_path: Path,
    server: FakeServer,
    retries: int,
    **more: Any,
) -> Typed:
    queue = f"tq-{uuid.uuid4().hex[:10]}"
    profile = Profile(
        name=f"invoicer-{uuid.uuid4().hex[:8]}",
        model="openai:gpt-test",
        task_queue=queue,
        output_schema=Invoice,
        output_retries=retries,
        **more,
    )
    s = settings.replace(
        temporal={"task_queue": queue},
        worker={"profiles_file": tmp_path / "absent-profiles.yaml"},
    )
    server.seen.clear()
    provider = OpenAICompatProvider(api_key="sk-test", base_url=server.base_url, timeout=5)
    worker, resources = build_worker(client, s, providers={"openai": provider}, profiles=[profile])
    with resources:
        async with worker:
            runtime = AgentRuntime(client, RunStore(resources.ctx), queue)
            done = await runtime.run(profile.name, "Invoice ACME for 12.50", initiator="al")
            events = await runtime.events(done.run_id)
    await provider.aclose()
    return Typed(profile, done.status, done.termination_reason, done.output, events)


async def test_a_pydantic_profile_asks_natively_retries_with_the_error_and_returns_the_object(
    client: Client, settings: Settings, tmp_path: Path, server: FakeServer
) -> None:
    server.replies += [
        Canned(body=completion({"content": '{"customer": "ACME"}'})),
        Canned(body=completion({"content": '{"customer": "ACME", "total_cents": 1250}'})),
    ]
    profile, status, reason, output, events = await _typed_run(
        client, settings, tmp_path, server, 2
    )
    assert (status, reason) == (RunStatus.COMPLETED, TerminationReason.ANSWERED)
    assert output == {"customer": "ACME", "total_cents": 1250}
    assert Invoice.model_validate(output) == Invoice(customer="ACME", total_cents=1250)
    first, second = (seen.body for seen in server.seen)
    # The model's schema, asked for natively on every call.
    assert profile.output_schema == Invoice.model_json_schema()
    for body in (first, second):
        assert body["response_format"] == {
            "type": "json_schema",
            "json_schema": {"name": "answer", "schema": Invoice.model_json_schema()},
        }
    # The second request carries the first answer, then the schema's error.
    answer, feedback = second["messages"][-2:]
    assert answer == {"role": "assistant", "content": '{"customer": "ACME"}'}
    assert feedback["role"] == "user"
    assert "'total_cents' is a required property" in feedback["content"]
    # The rejection is the run's event too, at this (the default, full) privacy level with
    # the validator's words; the schema's rule and where it is in the schema.
    [rejected] = [e for e in events if e.kind is EventKind.OUTPUT_INVALID]
    assert rejected.payload == {
        "content": "at (root): 'total_cents' is a required property",
        "checks": [{"rule": "required", "schema_path": "required"}],
    }


async def test_with_no_retries_an_invalid_answer_fails_the_run_at_once(
    client: Client, settings: Settings, tmp_path: Path, server: FakeServer
) -> None:
    server.replies.append(Canned(body=completion({"content": "ACME owes 12.50"})))
    _, status, reason, output, events = await _typed_run(client, settings, tmp_path, server, 0)
    assert (status, reason) == (RunStatus.FAILED, TerminationReason.INVALID_OUTPUT)
    assert output is None and len(server.seen) == 1
    [rejected] = [e for e in events if e.kind is EventKind.OUTPUT_INVALID]
    assert rejected.payload["checks"] == [{"rule": "json", "schema_path": ""}]
    assert rejected.payload["content"].startswith("the answer is not JSON")


@pytest.mark.parametrize("privacy", ["metadata", "none", "redacted"])
async def test_the_rejection_event_keeps_no_model_text_below_redacted(
    client: Client, settings: Settings, tmp_path: Path, server: FakeServer, privacy: str
) -> None:
    """The validator quotes the answer (here a marker the model wrote into a field): at
    `metadata` and `none` the event keeps the schema's rules and the text's size only; at
    `redacted` the words (with secrets masked, as every redacted payload: the output
    guardrail already masked any in the answer itself)."""
    marker = "lots-of-money-7731"
    server.replies += [
        Canned(body=completion({"content": f'{{"customer": "A", "total_cents": "{marker}"}}'})),
        Canned(body=completion({"content": '{"customer": "ACME", "total_cents": 1250}'})),
    ]
    done = await _typed_run(client, settings, tmp_path, server, 1, privacy=privacy)
    assert done.status is RunStatus.COMPLETED
    [rejected] = [e for e in done.events if e.kind is EventKind.OUTPUT_INVALID]
    kept = rejected.payload
    assert kept["checks"] == [{"rule": "type", "schema_path": "properties/total_cents/type"}]
    words = f"at total_cents: '{marker}' is not of type 'integer'"
    if privacy == "redacted":
        assert kept["content"] == words
    else:
        assert marker not in str(kept) and "content" not in kept
        assert kept["content_size"] == len(words) and kept["content_withheld"] is True


@pytest.mark.parametrize("valid", [True, False], ids=["valid", "invalid"])
async def test_past_the_iteration_cap_the_synthesised_answer_is_typed_too(
    client: Client, settings: Settings, tmp_path: Path, server: FakeServer, valid: bool
) -> None:
    """The cap's tool-less call is the last: its answer is the output, or, invalid, the run
    fails however many retries were left (no round is left to ask again in)."""
    server.replies += [
        Canned(body=completion({"tool_calls": [tool_call("c1", "nosuch", "{}")]}, "tool_calls")),
        Canned(body=completion({"content": '{"customer": "ACME", "total_cents": 5}'
                                if valid else "ACME, 5 cents"})),
    ]  # fmt: skip
    _, status, reason, output, _ = await _typed_run(
        client, settings, tmp_path, server, 2, max_iterations=1
    )
    assert len(server.seen) == 2 and "tools" not in server.seen[1].body
    assert "response_format" in server.seen[1].body
    if valid:
        assert (status, reason) == (RunStatus.COMPLETED, TerminationReason.MAX_ITERATIONS)
        assert output == {"customer": "ACME", "total_cents": 5}
    else:
        assert (status, reason) == (RunStatus.FAILED, TerminationReason.INVALID_OUTPUT)
        assert output is None
