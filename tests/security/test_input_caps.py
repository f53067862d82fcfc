"""Issue 25, bounded input: a prompt over AGENTRT_MAX_PROMPT_CHARS, or an A2A text part over
AGENTRT_MAX_PART_CHARS, is refused with a typed error on every path (operator API, A2A
send and follow-up, CLI, Python, and the worker itself for a client that skipped the
check) before anything is created: no run row, no workflow, no A2A task or message.

Before, the operator API took 100,000 characters and A2A up to its 1 MB body; the
worker then read all of it with quadratic patterns on its event loop."""

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from sqlalchemy import text
from temporalio.client import Client, WorkflowFailureError
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from agentrt.api.settings import ApiSettings
from agentrt.contracts.errors import InvalidRequestError, PromptTooLongError
from agentrt.contracts.ids import WORKFLOW_AGENT_RUN
from agentrt.contracts.run import RunRequest
from agentrt.core.settings import Settings
from agentrt.starter.cli import main as cli_main
from agentrt.starter.facade import AgentRuntime
from agentrt.store.a2a.view import INPUT_REQUIRED
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import build
from agentrt.workers.main import make_worker
from bench.a2a_fixtures import fixture_groups
from bench.fuzz_limits import caps_surface
from tests._fuzz import fuzz_slice
from tests.api.conftest import KEYS, Live, serving, user_message
from tests.api.ops_helpers import error_type, http, name, token
from tests.conftest import TEST_SEAL_KEYS

CAP, PART_CAP = 1_000, 300


@pytest.fixture(scope="module")
def capped_settings(settings: Settings) -> ApiSettings:
    """The A2A tests' settings, with small caps and a body limit far above them: a refusal
    is the cap's, not the body limit's."""
    groups = fixture_groups(
        KEYS, blocking_cap_seconds=30.0, max_body_bytes=1_000_000, migrate=False
    )
    return ApiSettings().replace(
        database={"url": settings.database.url, "data_dir": settings.database.data_dir},
        # as the A2A tests' settings: no payload keys here
        privacy={"seal_keys": TEST_SEAL_KEYS, "allow_plaintext_history": True},
        **groups,
        limits={"max_prompt_chars": CAP, "max_part_chars": PART_CAP},
    )


@pytest_asyncio.fixture
async def capped(client: Client, capped_settings: ApiSettings) -> AsyncIterator[Live]:
    async with serving(client, capped_settings) as served:
        yield served


def _rows(live: Live, table: str) -> int:
    with live.parts.engine.connect() as c:
        return int(c.execute(text(f"SELECT count(*) FROM {table}")).scalar_one())


async def _no_workflow(client: Client, workflow_id: str) -> None:
    with pytest.raises(RPCError) as err:
        await client.get_workflow_handle(workflow_id).describe()
    assert err.value.status is RPCStatusCode.NOT_FOUND


def _refused_params(reply: dict[str, object]) -> str:
    error = reply.get("error")
    assert isinstance(error, dict), reply
    assert error["code"] == -32602, reply
    message = str(error["message"])
    assert message.startswith("prompt_too_long: "), message
    return message


async def test_operator_api_start_over_the_prompt_cap_is_413_prompt_too_long_and_creates_nothing(
    capped: Live, client: Client
) -> None:
    run_id = str(uuid.uuid4())
    runs = _rows(capped, "agent_run")
    async with http(capped, token(capped, name("alice"), "runs:start", "runs:read")) as api:
        reply = await api.post(
            "/runs", json={"profile": "helper", "prompt": "x" * (CAP + 1), "run_id": run_id}
        )
        assert reply.status_code == 413, reply.text
        assert error_type(reply) == "prompt_too_long"
        assert "1001 characters, over the cap of 1000" in reply.json()["error"]["message"]
        assert (await api.get(f"/runs/{run_id}")).status_code == 404
        assert _rows(capped, "agent_run") == runs
        await _no_workflow(client, run_id)
        # At the cap is accepted: the refusal is the cap's.
        at_cap = await api.post("/runs", json={"profile": "helper", "prompt": "y" * CAP})
        assert at_cap.status_code == 201, at_cap.text


async def test_a2a_message_over_the_prompt_cap_is_invalid_params_and_creates_no_task(
    capped: Live,
) -> None:
    tasks, runs = _rows(capped, "a2a_task"), _rows(capped, "agent_run")
    reply = await capped.rpc("SendMessage", {"message": user_message("x" * (CAP + 1))})
    assert "1001 characters, over the cap" in _refused_params(reply)
    # Two parts within the part cap whose text is over the prompt cap together.
    two = user_message("a")
    two["parts"] = [{"text": "a" * PART_CAP}, {"text": "b" * PART_CAP}, {"text": "c" * PART_CAP},
                    {"text": "d" * PART_CAP}]  # fmt: skip
    assert "the message text" in _refused_params(await capped.rpc("SendMessage", {"message": two}))
    assert (_rows(capped, "a2a_task"), _rows(capped, "agent_run")) == (tasks, runs)


async def test_a_900kb_a2a_message_is_refused_by_the_default_cap_and_creates_no_task(
    client: Client, capped_settings: ApiSettings
) -> None:
    """The finding: a 900 KB message (within the 1 MB body limit) pinned a worker until it
    was killed. With the default caps it is refused at the door."""
    defaults = capped_settings.replace(
        limits={"max_prompt_chars": 100_000, "max_part_chars": 100_000}
    )
    async with serving(client, defaults) as live:
        tasks, runs = _rows(live, "a2a_task"), _rows(live, "agent_run")
        reply = await live.rpc("SendMessage", {"message": user_message("a@" * 450_000)})
        assert "900000 characters, over the cap of 100000" in _refused_params(reply)
        assert (_rows(live, "a2a_task"), _rows(live, "agent_run")) == (tasks, runs)


async def test_a2a_text_part_over_the_part_cap_is_invalid_params_and_creates_no_task(
    capped: Live,
) -> None:
    tasks = _rows(capped, "a2a_task")
    message = user_message("a")
    message["parts"] = [{"text": "a" * 10}, {"text": "b" * (PART_CAP + 1)}]  # 311 < CAP
    refused = _refused_params(await capped.rpc("SendMessage", {"message": message}))
    assert "a text part is 301 characters" in refused and "AGENTRT_MAX_PART_CHARS" in refused
    assert _rows(capped, "a2a_task") == tasks


async def test_a2a_follow_up_over_the_prompt_cap_is_invalid_params_and_changes_nothing(
    capped: Live,
) -> None:
    sent = await capped.rpc(
        "SendMessage",
        {"message": user_message("which order is it about?"), "configuration": {}},
    )
    task_id = sent["result"]["task"]["id"]
    for _ in range(600):
        rec = capped.store.get(task_id, "alice")
        assert rec is not None
        if rec.state == INPUT_REQUIRED:
            break
        await asyncio.sleep(0.05)
    assert rec is not None and rec.state == INPUT_REQUIRED
    history = len(rec.history)
    follow = user_message("z" * (CAP + 1), taskId=task_id)
    assert "over the cap" in _refused_params(await capped.rpc("SendMessage", {"message": follow}))
    after = capped.store.get(task_id, "alice")
    assert after is not None
    assert (after.state, len(after.history)) == (INPUT_REQUIRED, history)


async def test_python_facade_refuses_a_prompt_over_the_cap_with_a_typed_error_before_temporal(
    settings: Settings, client: Client
) -> None:
    """`AgentRuntime.connect` takes the cap from the settings; no worker polls the queue,
    so a start that reached Temporal would wait for one instead of failing at once."""
    run_id = str(uuid.uuid4())
    capped = settings.replace(
        limits={"max_prompt_chars": CAP},
        temporal={
            "task_queue": f"tq-{uuid.uuid4().hex[:10]}",
            "start_timeout_seconds": 3.0,
            "address": client.service_client.config.target_host,
        },
    )
    async with await AgentRuntime.connect(capped) as runtime:
        with pytest.raises(PromptTooLongError) as err:
            await runtime.start("support", "x" * (CAP + 1), run_id=run_id)
    assert isinstance(err.value, InvalidRequestError)
    assert "over the cap of 1000" in str(err.value)
    await _no_workflow(client, run_id)


@pytest.mark.parametrize("api", [[], ["--api", "http://127.0.0.1:9"]])
def test_cli_refuses_a_prompt_over_the_cap_in_one_line_with_exit_2_before_connecting(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    api: list[str],
) -> None:
    monkeypatch.chdir(tmp_path)  # no .env of the checkout
    monkeypatch.setenv("AGENTRT_MAX_PROMPT_CHARS", str(CAP))
    monkeypatch.setenv("AGENTRT_TEMPORAL_ADDRESS", "127.0.0.1:9")  # nothing listens
    monkeypatch.setenv("AGENTRT_DATA_DIR", str(tmp_path / "none"))
    code = cli_main([*api, "start", "support", "x" * (CAP + 1)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip().splitlines() == [
        "agentrt: prompt is 1001 characters, over the cap of 1000 (AGENTRT_MAX_PROMPT_CHARS)"
    ]


async def test_a_worker_refuses_a_prompt_over_its_cap_from_a_client_that_skipped_the_check(
    client: Client, settings: Settings
) -> None:
    """A stock Temporal client starts the workflow itself: the begin activity refuses the
    prompt (PromptTooLong) and writes no run row."""
    queue = f"tq-{uuid.uuid4().hex[:10]}"
    capped = settings.replace(limits={"max_prompt_chars": CAP}, temporal={"task_queue": queue})
    built = build(capped)
    run_id = str(uuid.uuid4())
    try:
        async with make_worker(client, built, capped):
            handle = await client.start_workflow(
                WORKFLOW_AGENT_RUN,
                RunRequest(run_id=run_id, profile="support", prompt="x" * (CAP + 1)),
                id=run_id,
                task_queue=queue,
            )
            with pytest.raises(WorkflowFailureError) as failed:
                await asyncio.wait_for(handle.result(), 30)
            assert RunStore(built.ctx).get(run_id) is None
    finally:
        built.close()
    cause = failed.value.cause
    assert isinstance(cause, ApplicationError) and cause.type == "PromptTooLong", cause


async def test_fuzzed_prompts_around_the_caps_are_refused_typed_or_start_a_run(
    capped: Live,
) -> None:
    """A seeded slice of `python -m bench fuzz`'s caps surface (bench/fuzz_limits.py)."""
    secret = token(capped, name("fuzz"), "runs:start", "runs:read")
    limits = (CAP, PART_CAP, capped.settings.api.max_body_bytes)
    [tally] = await fuzz_slice(
        caps_surface, capped.url, capped.parts.engine, KEYS["alice"], secret, limits, cases=20
    )
    assert tally.rejected > 0, tally


async def test_an_operators_input_over_the_prompt_cap_is_413_and_reaches_no_run(
    capped: Live,
) -> None:
    from tests.api.test_input_answers import input_answer, waiting_run

    run_id = await waiting_run(capped)
    async with http(capped, token(capped, name("op"), "runs:read-all", "runs:decide")) as api:
        reply = await api.post(f"/runs/{run_id}/answers", json=input_answer("x" * (CAP + 1)))
        assert reply.status_code == 413 and error_type(reply) == "prompt_too_long"
        events = (await api.get(f"/runs/{run_id}/events")).json()["events"]
        assert not [e for e in events if e["kind"] == "input"]
        at_cap = await api.post(f"/runs/{run_id}/answers", json=input_answer("y" * CAP))
        assert at_cap.status_code == 200, at_cap.text  # the refusal was the cap's
