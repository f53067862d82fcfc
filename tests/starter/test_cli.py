"""`agentrt` against the real dev server and database of the suite. Commands run in-process
(`main([...])` in a thread, since it runs its own event loop) with AGENTRT_* pointing at the
fixtures; one runs as the installed console script."""

import asyncio
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from agentrt.contracts.errors import RunNotBegunError
from agentrt.contracts.ids import WORKFLOW_AGENT_RUN
from agentrt.contracts.run import RunRequest
from agentrt.core.devserver import free_port
from agentrt.core.settings import Settings
from agentrt.starter.cli import main
from agentrt.starter.facade import AgentRuntime
from agentrt.workers.compose import WorkerResources
from agentrt.workers.main import make_worker
from tests._proxy import FlakyProxy
from tests.conftest import TEST_SEAL_KEYS
from tests.workflows._waiting import Calls, watch

WorkerFactory = Callable[[], Worker]

FIXTURES = Path(__file__).parent.parent / "fixtures"
REFUND = "Please refund order 1042"


@pytest.fixture
def cli_env(
    monkeypatch: pytest.MonkeyPatch,
    temporal_env: WorkflowEnvironment,
    database_url: str,
    task_queue: str,
    tmp_path: Path,
) -> dict[str, str]:
    env = {
        "AGENTRT_TEMPORAL_ADDRESS": temporal_env.client.service_client.config.target_host,
        "AGENTRT_DATABASE_URL": database_url,
        "AGENTRT_SEAL_KEYS": TEST_SEAL_KEYS,
        "AGENTRT_TASK_QUEUE": task_queue,
        "AGENTRT_PROFILES_FILE": str(FIXTURES / "profiles.yaml"),
        "AGENTRT_RULES_FILE": str(FIXTURES / "rules.yaml"),
        "AGENTRT_DATA_DIR": str(tmp_path / "data"),
        "COLUMNS": "200",  # keep rich from wrapping the lines the tests look for
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return env


@pytest.fixture
def worker_factory(
    client: Client, parts: WorkerResources, settings: Settings, task_queue: str
) -> WorkerFactory:
    """A worker on the test's queue, started when the test chooses."""
    return lambda: make_worker(client, parts, settings.replace(temporal={"task_queue": task_queue}))


async def agentrt(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()  # drop anything printed before
    code = await asyncio.to_thread(main, list(args))
    out, err = capsys.readouterr()
    return code, out, err


async def succeeded(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """`agentrt *args`'s output, once it exited 0 (else its error output is the failure)."""
    code, out, err = await agentrt(capsys, *args)
    assert code == 0, err
    return out


def assert_clean_error(code: int, err: str, *fragments: str) -> None:
    assert code == 2
    assert "Traceback" not in err
    # `run` names its run first ("run <id> started"); then the error is the one last line.
    lines = [ln for ln in err.splitlines() if ln.strip() and " started" not in ln]
    assert len(lines) == 1 and lines[0].startswith("agentrt: "), err
    for fragment in fragments:
        assert fragment in lines[0]


@pytest.mark.usefixtures("cli_env", "worker")
async def test_run_blocks_then_prints_events_outcome_and_answer(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = await agentrt(capsys, "run", "auto", REFUND)
    assert code == 0, err
    for kind in ("run_started", "llm", "tool", "run_completed"):
        assert kind in out
    assert "lookup_order(order_id=1042)" in out and "issue_refund(" in out
    assert "Outcome: COMPLETED (answered) after 3 iteration(s)" in out
    assert "Answer: Done: order 1042 was refunded in full" in out
    assert "started" in err  # the run id goes to stderr, results to stdout


@pytest.mark.usefixtures("cli_env", "worker")
async def test_start_then_follow_events_then_status(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = await agentrt(capsys, "start", "auto", REFUND, "--initiator", "erin")
    assert code == 0
    run_id = out.strip()
    assert str(uuid.UUID(run_id)) == run_id

    out = await succeeded(capsys, "events", run_id, "--follow")
    lines = out.splitlines()
    assert [ln.split()[0] for ln in lines] == [f"#{i}" for i in range(7)]
    assert "run_completed" in lines[-1]
    assert "by erin" in lines[0]

    code, out, _ = await agentrt(capsys, "status", run_id)
    assert code == 0
    assert "COMPLETED" in out and "answered" in out and "refunded in full" in out

    code, out, _ = await agentrt(capsys, "status", run_id, "--json")
    view = json.loads(out)
    assert view["status"] == "COMPLETED" and view["iterations"] == 3
    assert view["initiator"] == "erin" and view["pending_approval"] is None

    code, out, _ = await agentrt(capsys, "events", run_id, "--after", "4", "--json")
    assert code == 0
    events = [json.loads(ln) for ln in out.splitlines()]
    assert [e["sequence"] for e in events] == [5, 6]
    assert events[-1]["kind"] == "run_completed"


def unbegun_reads(calls: Calls) -> int:
    """How many of the watched `AgentRuntime.status` reads found a run that Temporal holds
    and no worker has begun (an error that says it may yet begin)."""
    return sum(isinstance(e, RunNotBegunError) and e.pending for e in calls.raised)


@pytest.mark.usefixtures("cli_env")
async def test_follow_waits_for_a_run_that_no_worker_has_begun_yet(
    capsys: pytest.CaptureFixture[str],
    worker_factory: WorkerFactory,
    client: Client,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # `agentrt start` waits for the run to begin; another starter (`temporal workflow
    # start`, an older client) may leave one that no worker has begun yet.
    run_id = str(uuid.uuid4())
    await client.start_workflow(
        WORKFLOW_AGENT_RUN,
        RunRequest(run_id=run_id, profile="auto", prompt=REFUND),
        id=run_id,
        task_queue=os.environ["AGENTRT_TASK_QUEUE"],
    )
    polls = watch(monkeypatch, AgentRuntime, "status")
    follow = asyncio.create_task(agentrt(capsys, "events", run_id, "--follow"))
    # The run exists in Temporal only: the follow reads it as not begun, and reads again
    # rather than ending or failing.
    await polls.until(lambda c: unbegun_reads(c) >= 2, "the follow read the run twice")
    assert not follow.done()
    async with worker_factory():
        code, out, err = await asyncio.wait_for(follow, 30)
    assert code == 0, err
    assert "run_completed" in out


@pytest.mark.usefixtures("cli_env", "worker")
async def test_bad_input_is_one_clean_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    unknown = str(uuid.uuid4())
    code, _, err = await agentrt(capsys, "status", unknown)
    assert_clean_error(code, err, f"no run {unknown}")
    code, _, err = await agentrt(capsys, "events", unknown)
    assert_clean_error(code, err, f"no run {unknown}")
    code, _, err = await agentrt(capsys, "status", "not-a-uuid")
    assert_clean_error(code, err, "is not a uuid")
    code, _, err = await agentrt(capsys, "run", "auto", "   ")
    assert_clean_error(code, err, "prompt is empty")
    code, _, err = await agentrt(capsys, "start", "auto", REFUND, "--max-iterations", "0")
    assert_clean_error(code, err, "max_iterations")
    code, _, err = await agentrt(capsys, "start", "auto", REFUND, "--max-iterations", "21")
    assert_clean_error(code, err, "max_iterations must be between 1 and 20, got 21")
    code, _, err = await agentrt(capsys, "run", "no-such-profile", REFUND)
    assert_clean_error(code, err, "no-such-profile")
    code, _, err = await agentrt(capsys, "approve", unknown, "--by", "x")
    assert_clean_error(code, err, f"no run {unknown}")


@pytest.mark.usefixtures("cli_env")
async def test_unreachable_temporal_is_a_clean_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTRT_TEMPORAL_ADDRESS", f"127.0.0.1:{free_port()}")
    for args in (("status", str(uuid.uuid4())), ("inbox",), ("start", "auto", REFUND)):
        code, _, err = await agentrt(capsys, *args)
        assert_clean_error(code, err, "cannot reach Temporal", "AGENTRT_TEMPORAL_ADDRESS")


@pytest.mark.usefixtures("cli_env", "worker")
async def test_temporal_lost_while_a_command_waits_is_a_clean_error(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    temporal_env: WorkflowEnvironment,
) -> None:
    """`run` waits on a run that waits for approval; its connection to Temporal is cut (a
    proxy in front of the dev server drops it and refuses new ones): one line, no traceback."""
    host, port = temporal_env.client.service_client.config.target_host.rsplit(":", 1)
    proxy = FlakyProxy(host, int(port))
    proxy.start()
    try:
        monkeypatch.setenv("AGENTRT_TEMPORAL_ADDRESS", f"127.0.0.1:{proxy.port}")
        capsys.readouterr()
        running = asyncio.create_task(asyncio.to_thread(main, ["run", "support", REFUND]))
        err = ""
        for _ in range(300):
            err += capsys.readouterr().err
            if "waiting: agentrt approve" in err:
                break
            await asyncio.sleep(0.1)
        assert "waiting: agentrt approve" in err
        proxy.cut()
        code = await asyncio.wait_for(running, 90)
        err += capsys.readouterr().err
    finally:
        proxy.close()
    lines = [ln for ln in err.splitlines() if ln.startswith("agentrt: ")]
    assert code == 2 and "Traceback" not in err, err
    assert len(lines) == 1 and "lost the connection to Temporal" in lines[0], err
    assert f"127.0.0.1:{proxy.port}" in lines[0]


@pytest.mark.usefixtures("cli_env")
async def test_unreachable_database_is_a_clean_error_naming_the_setting(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(
        "AGENTRT_DATABASE_URL", "postgresql+psycopg://nobody@127.0.0.1:1/x?connect_timeout=2"
    )
    for args in (("status", str(uuid.uuid4())), ("events", str(uuid.uuid4())), ("inbox",)):
        code, _, err = await agentrt(capsys, *args)
        assert_clean_error(code, err, "cannot reach the database", "AGENTRT_DATABASE_URL")


READ_ONLY = (
    ("status", "6a0d8a54-8b6a-4d7e-9a43-3a7a7d9d1c11"),
    ("events", "6a0d8a54-8b6a-4d7e-9a43-3a7a7d9d1c11"),
    ("inbox",),
)


@pytest.fixture
def bare_env(
    monkeypatch: pytest.MonkeyPatch, temporal_env: WorkflowEnvironment, tmp_path: Path
) -> Path:
    """A directory of its own as cwd, only the Temporal address set: a user's first try."""
    for key in [k for k in os.environ if k.startswith("AGENTRT_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv(
        "AGENTRT_TEMPORAL_ADDRESS", temporal_env.client.service_client.config.target_host
    )
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.chdir(tmp_path)
    return tmp_path


async def test_read_only_commands_in_an_empty_directory_create_nothing(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, bare_env: Path
) -> None:
    """A user trying `agentrt status` in some directory: no `./.agentrt/`, no key, no
    database appears there; the error says which setting points at the worker's data."""
    for args in READ_ONLY:
        code, _, err = await agentrt(capsys, *args)
        assert_clean_error(code, err, "no seal key: set AGENTRT_SEAL_KEYS", "AGENTRT_DATA_DIR")
    monkeypatch.setenv("AGENTRT_SEAL_KEYS", TEST_SEAL_KEYS)
    for args in READ_ONLY:
        code, _, err = await agentrt(capsys, *args)
        assert_clean_error(code, err, "no database at", "AGENTRT_DATABASE_URL")
    assert await asyncio.to_thread(os.listdir, bare_env) == []


async def test_migrate_prepares_a_data_dir_that_clients_then_use(
    capsys: pytest.CaptureFixture[str], bare_env: Path
) -> None:
    out = await succeeded(capsys, "migrate")
    key = bare_env / ".agentrt" / "seal.key"
    assert f"seal key: {key}" in out
    assert key.stat().st_mode & 0o777 == 0o600
    before = key.read_text()
    await succeeded(capsys, "inbox")  # the client reads the key migrate made
    await succeeded(capsys, "migrate")
    assert key.read_text() == before  # an existing key is kept


@pytest.mark.usefixtures("cli_env")
async def test_migrate_brings_a_fresh_database_to_head(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'fresh' / 'agentrt.db'}"
    monkeypatch.setenv("AGENTRT_DATABASE_URL", "")
    monkeypatch.setenv("AGENTRT_DATA_DIR", str(tmp_path / "fresh"))
    out = await succeeded(capsys, "migrate")
    assert "schema at head" in out
    engine = create_engine(url)
    try:
        assert "agent_run" in inspect(engine).get_table_names()
    finally:
        engine.dispose()
    code, _, _ = await agentrt(capsys, "migrate")  # idempotent
    assert code == 0


def test_console_script_exits_2_without_traceback(cli_env: dict[str, str]) -> None:
    script = Path(sys.executable).parent / "agentrt"
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "agentrt.starter.cli"]
    proc = subprocess.run(
        [*cmd, "status", str(uuid.uuid4())],
        env={**os.environ, **cli_env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("agentrt: no run ") and "Traceback" not in proc.stderr


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    # --by is required without --api (with --api the token's principal decides)
    assert main(["approve", str(uuid.uuid4())]) == 2
    assert "--by" in capsys.readouterr().err


@pytest.mark.usefixtures("cli_env", "worker")
async def test_budget_shows_a_runs_spend_reserved_and_room(
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = await succeeded(capsys, "start", "auto", REFUND)
    run_id = out.strip()
    assert (await agentrt(capsys, "events", run_id, "--follow"))[0] == 0  # until it ends
    out = await succeeded(capsys, "budget", run_id, "--json")
    state = json.loads(out)
    assert state["budget"] is None and state["reserved"] == {"tokens": 0, "cost_usd": 0.0}
    spent = state["spent"]["prompt_tokens"] + state["spent"]["completion_tokens"]
    code, out, _ = await agentrt(capsys, "budget", run_id)
    assert code == 0
    assert f"spent      {spent} tok" in out and "reserved   0 tok" in out, out
    assert "room left  no token limit, no cost limit" in out, out
