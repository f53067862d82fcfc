"""Open a facade from settings: the store (no migrations: the worker owns the schema) and a
Temporal client from the one factory, so a run started here is encrypted like any other."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from agentrt.contracts.errors import AgentRuntimeError, ConfigError
from agentrt.core.settings import Settings
from agentrt.core.temporal import connect
from agentrt.starter.facade import AgentRuntime
from agentrt.store.open import open_store
from agentrt.store.runs import RunStore
from agentrt.store.sealing import Sealer


class TemporalUnavailableError(AgentRuntimeError):
    """The Temporal frontend could not be reached."""


@asynccontextmanager
async def open_runtime(settings: Settings) -> AsyncIterator[AgentRuntime]:
    """`async with open_runtime(Settings()) as runtime:` — the facade a client program uses."""
    try:
        sealer = Sealer.from_b64(settings.seal_keys_spec())
    except ValueError as exc:
        raise ConfigError(f"AGENTRT_SEAL_KEYS: {exc}") from None
    engine, ctx = open_store(settings.resolved_database_url(), sealer, run_migrations=False)
    try:
        try:
            client = await connect(settings)
        except RuntimeError as exc:
            raise TemporalUnavailableError(
                f"cannot reach Temporal at {settings.temporal_address}: {exc}"
            ) from None
        yield AgentRuntime(client, RunStore(ctx), settings.task_queue)
    finally:
        engine.dispose()
