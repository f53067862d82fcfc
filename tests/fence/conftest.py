"""The worker-process kill tests' fixtures (test_fence_kill.py, test_reconcile_kill.py): a
pool of real worker processes, and a `killer` that starts a run on one with a fault point
armed, SIGKILLs it there and settles the run on a fresh worker."""

from pathlib import Path

import pytest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from agentrt.core.settings import Settings
from agentrt.starter.facade import AgentRuntime
from agentrt.workers.compose import WorkerResources
from tests.fence._kill import Killer
from tests.workers._proc import WorkerPool
from tests.workers.conftest import pool

__all__ = ["pool"]  # every worker process a test spawns, closed after it


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
