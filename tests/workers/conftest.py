"""Shared fixtures of the worker-process tests."""

from collections.abc import Iterator
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from agentrt.core.settings import Settings
from tests.conftest import TEST_SEAL_KEYS
from tests.workers._proc import Arm, Armed, WorkerPool, arm_worker

FIXTURES = Path(__file__).parent.parent / "fixtures"


@pytest.fixture
def pool(tmp_path: Path) -> Iterator[WorkerPool]:
    """Every worker process a test spawns, none left running after it, whatever happened."""
    p = WorkerPool(tmp_path)
    yield p
    p.close()


@pytest.fixture
def arm(
    pool: WorkerPool,
    settings: Settings,
    temporal_env: WorkflowEnvironment,
    task_queue: str,
    tmp_path: Path,
) -> Arm:
    """A worker process on the test's queue, armed to block at the fault point it is given."""

    def _arm(point: str) -> Armed:
        client = temporal_env.client
        return arm_worker(pool, settings, client, task_queue, point, tmp_path / "markers")

    return _arm


@pytest.fixture
def no_database(tmp_path: Path) -> Settings:
    """The suite's settings but for the database: a file that is never made, for a worker
    refused before it opens a database (the check's order: keys, providers, profiles,
    policies, tools, and only then the store). Such a test runs once, not again on
    PostgreSQL; one that did reach the database would be refused for the absent schema
    instead, and fail."""
    return Settings().replace(
        database={"url": f"sqlite:///{tmp_path / 'never.db'}", "data_dir": tmp_path / "data"},
        privacy={"seal_keys": TEST_SEAL_KEYS},
        providers={"rules_file": FIXTURES / "rules.yaml"},
        worker={"profiles_file": FIXTURES / "profiles.yaml"},
    )
