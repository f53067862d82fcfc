"""Shared fixtures of the worker-process tests."""

from collections.abc import Iterator
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from agentrt.core.settings import Settings
from tests.workers._proc import Arm, Armed, WorkerPool, arm_worker


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
