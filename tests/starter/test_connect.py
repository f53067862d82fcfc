"""`AgentRuntime.connect()` / `from_env()`: a client built from settings alone, against the
suite's dev server and database; what it refuses, it refuses naming the setting, and it
never creates anything."""

import asyncio
import os
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from agentrt import (
    AgentRuntime,
    ConfigError,
    RunNotFoundError,
    RunStatus,
    Settings,
    StoreUnavailableError,
    TemporalUnavailableError,
)
from agentrt.core.devserver import free_port
from tests.conftest import TEST_SEAL_KEYS


def _settings(settings: Settings, address: str, task_queue: str, **update: object) -> Settings:
    return settings.replace(temporal={"address": address, "task_queue": task_queue}, **update)


@pytest.mark.usefixtures("worker")
async def test_connect_runs_an_agent_end_to_end_and_closes(
    temporal_env: WorkflowEnvironment, settings: Settings, task_queue: str
) -> None:
    address = temporal_env.client.service_client.config.target_host
    async with await AgentRuntime.connect(_settings(settings, address, task_queue)) as runtime:
        view = await runtime.run("auto", "what about my order?")
        assert view.status is RunStatus.COMPLETED
        assert (await runtime.status(view.run_id)).status is RunStatus.COMPLETED
        assert await runtime.events(view.run_id)
        assert runtime._engine is not None
    assert runtime._engine is None  # the context manager closed it
    await runtime.close()  # idempotent


@pytest.mark.usefixtures("worker")
async def test_from_env_reads_the_environment(
    temporal_env: WorkflowEnvironment,
    database_url: str,
    task_queue: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.chdir(tmp_path)
    for key, value in {
        "AGENTRT_TEMPORAL_ADDRESS": temporal_env.client.service_client.config.target_host,
        "AGENTRT_DATABASE_URL": database_url,
        "AGENTRT_SEAL_KEYS": TEST_SEAL_KEYS,
        "AGENTRT_TASK_QUEUE": task_queue,
    }.items():
        monkeypatch.setenv(key, value)
    runtime = await AgentRuntime.from_env()
    try:
        view = await runtime.run("auto", "what about my order?")  # queue and keys from env
        assert view.status is RunStatus.COMPLETED
        with pytest.raises(RunNotFoundError):
            await runtime.status("00000000-0000-4000-8000-000000000000")
    finally:
        await runtime.close()
    assert await asyncio.to_thread(os.listdir, tmp_path) == []


async def test_unreachable_temporal_names_the_setting(settings: Settings, task_queue: str) -> None:
    dead = f"127.0.0.1:{free_port()}"
    with pytest.raises(TemporalUnavailableError) as err:
        await AgentRuntime.connect(_settings(settings, dead, task_queue))
    assert f"cannot reach Temporal at {dead}" in str(err.value)
    assert "AGENTRT_TEMPORAL_ADDRESS" in str(err.value)


async def test_unreachable_database_names_the_setting(
    temporal_env: WorkflowEnvironment, settings: Settings, task_queue: str
) -> None:
    address = temporal_env.client.service_client.config.target_host
    down = "postgresql+psycopg://nobody@127.0.0.1:1/none?connect_timeout=2"
    with pytest.raises(StoreUnavailableError) as err:
        await AgentRuntime.connect(_settings(settings, address, task_queue, database={"url": down}))
    assert "cannot reach the database at postgresql+psycopg://nobody@127.0.0.1:1/none" in str(
        err.value
    )
    assert "AGENTRT_DATABASE_URL" in str(err.value)


async def test_a_missing_sqlite_database_is_not_created(
    temporal_env: WorkflowEnvironment, settings: Settings, task_queue: str, tmp_path: Path
) -> None:
    address = temporal_env.client.service_client.config.target_host
    data = tmp_path / "data"
    data.mkdir()  # even where the directory exists, no empty database file appears
    fresh = _settings(settings, address, task_queue, database={"url": "", "data_dir": data})
    with pytest.raises(StoreUnavailableError) as err:
        await AgentRuntime.connect(fresh)
    assert f"no database at {data / 'agentrt.db'}" in str(err.value)
    assert "AGENTRT_DATABASE_URL" in str(err.value) and "AGENTRT_DATA_DIR" in str(err.value)
    assert list(data.iterdir()) == []


async def test_no_seal_key_is_a_config_error_and_none_is_made(
    settings: Settings, task_queue: str, tmp_path: Path
) -> None:
    keyless = _settings(
        settings,
        "127.0.0.1:1",
        task_queue,
        privacy={"seal_keys": None},
        database={"data_dir": tmp_path / "nowhere"},
    )
    with pytest.raises(ConfigError) as err:
        await AgentRuntime.connect(keyless)
    assert str(err.value).startswith("no seal key: set AGENTRT_SEAL_KEYS")
    assert not (tmp_path / "nowhere").exists()


async def test_bad_environment_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTRT_MAX_CONCURRENT_ACTIVITIES", "many")
    with pytest.raises(ConfigError) as err:
        await AgentRuntime.from_env()
    assert "max_concurrent_activities" in str(err.value)
