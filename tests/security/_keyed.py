"""A worker of its own whose payloads are encrypted, and clients of it with the workers'
keys, other keys or none: the set-up the payload-key tests share (test_payload_binding.py,
test_plaintext_start.py)."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from temporalio.client import Client
from temporalio.converter import DataConverter
from temporalio.testing import WorkflowEnvironment

from agentrt.core.settings import Settings
from agentrt.core.temporal import data_converter
from agentrt.starter.facade import AgentRuntime
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import WorkerResources
from agentrt.workers.main import make_worker


@dataclass
class Keyed:
    address: str  # the Temporal dev server's
    queue: str  # the keyed worker's, which no other test polls
    parts: WorkerResources
    client: Client  # on the workers' own keys
    plain: Client  # the dev server's own client: no payload keys, as the stock CLI
    runtime: AgentRuntime  # on the workers' own keys
    profile: str  # the profile the tests run on it

    async def runtime_with(self, converter: DataConverter) -> AgentRuntime:
        """A runtime on the worker's store and queue, over a client of `converter` (other
        keys, none, or an earlier envelope)."""
        client = await Client.connect(self.address, data_converter=converter)
        return AgentRuntime(client, RunStore(self.parts.ctx), self.queue)


@asynccontextmanager
async def keyed_worker(
    temporal_env: WorkflowEnvironment,
    parts: WorkerResources,
    settings: Settings,
    keys: str,
    profile: str = "support",
) -> AsyncIterator[Keyed]:
    """A worker of `parts` on `settings` (their task queue its own) whose payloads are
    encrypted under `keys`, running until the block ends; its tests run `profile`."""
    address = temporal_env.client.service_client.config.target_host
    client = await Client.connect(address, data_converter=data_converter(keys))
    queue = settings.temporal.task_queue
    async with make_worker(client, parts, settings):
        runtime = AgentRuntime(client, RunStore(parts.ctx), queue)
        yield Keyed(address, queue, parts, client, temporal_env.client, runtime, profile)
