"""The fence tests' fixtures. The fence's SQL (test_fence_sql.py, test_fence_void.py): the
suite's store and a run begun in it. The worker-process kill tests (test_fence_kill.py,
test_reconcile_kill.py): a pool of real worker processes, and a `killer` that starts a run
on one with a fault point armed, SIGKILLs it there and settles the run on a fresh worker."""

from pathlib import Path

import pytest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from agentrt.core.settings import Settings
from agentrt.starter.facade import AgentRuntime
from agentrt.store.db.context import StoreContext
from agentrt.workers.compose import WorkerResources
from tests._runs import begin_run
from tests.fence._kill import Killer
from tests.workers._proc import WorkerPool
from tests.workers.conftest import pool

__all__ = ["pool"]  # every worker process a test spawns, closed after it


@pytest.fixture
def fence(parts: WorkerResources) -> StoreContext:
    return parts.ctx


@pytest.fixture
def run_id(fence: StoreContext) -> str:
    return begin_run(fence, profile="auto", prompt="p")


@pytest.fixture
def killer(
    pool: WorkerPool,
    temporal_env: WorkflowEnvironment,
    client: Client,
    runtime: AgentRuntime,
    settings: Settings,
    parts: WorkerResources,
    task_queue: str,
    tmp_path: Path,
) -> Killer:
    return Killer(
        pool=pool,
        address=temporal_env.client.service_client.config.target_host,
        client=client,
        runtime=runtime,
        settings=settings,
        parts=parts,
        task_queue=task_queue,
        markers=tmp_path / "markers",
    )
