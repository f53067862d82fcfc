"""A worker's resources (workers/compose.build) that a test or fixture owns: built from
its settings, and closed afterwards, whatever happened (which withdraws its profiles'
registration, stops its pools and disposes its engine)."""

import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager

from temporalio.client import Client

from agentrt.core.settings import Settings
from agentrt.starter.facade import AgentRuntime
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import WorkerResources, build
from agentrt.workers.main import make_worker


@contextmanager
def built(
    settings: Settings, *, faults: Callable[[str], None] | None = None
) -> Iterator[WorkerResources]:
    resources = build(settings, faults=faults)
    try:
        yield resources
    finally:
        resources.close()


@asynccontextmanager
async def serving_runtime(
    client: Client, resources: WorkerResources, settings: Settings
) -> AsyncIterator[AgentRuntime]:
    """A worker over `resources` on a task queue of its own, and a runtime that starts runs
    there: the worker stops when the block ends."""
    queue = f"tq-{uuid.uuid4().hex[:10]}"
    async with make_worker(client, resources, settings.replace(temporal={"task_queue": queue})):
        yield AgentRuntime(client, RunStore(resources.ctx), queue)
