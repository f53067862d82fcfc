"""What `AgentRuntime.connect` opens: a running deployment's database (no migration, no
data directory, no seal key created) and its Temporal frontend, from its settings."""

import asyncio

from pydantic import ValidationError
from sqlalchemy import Engine
from temporalio.client import Client

from agentrt.contracts.errors import ConfigError
from agentrt.core.settings import Settings
from agentrt.core.temporal import connect
from agentrt.store.db.context import StoreContext
from agentrt.store.db.open import open_store
from agentrt.store.db.sealing import Sealer


async def open_deployment(
    settings: Settings | None,
) -> tuple[Settings, Engine, StoreContext, Client]:
    """The settings (from the environment when not given), the store's engine and context,
    and the Temporal client. Raises ConfigError, StoreUnavailableError or
    TemporalUnavailableError, each naming the setting to change."""
    if settings is None:
        try:
            settings = Settings()
        except ValidationError as exc:
            e = exc.errors()[0]
            where = ".".join(str(p) for p in e["loc"])
            raise ConfigError(f"invalid AGENTRT_* settings: {where}: {e['msg']}") from None
    try:
        sealer = Sealer.from_b64(settings.read_seal_keys())
    except ValueError as exc:
        raise ConfigError(f"AGENTRT_SEAL_KEYS: {exc}") from None
    engine, ctx = await asyncio.to_thread(
        open_store, settings.database.resolved_url(), sealer, run_migrations=False
    )
    try:
        client = await connect(settings)
    except BaseException:
        engine.dispose()
        raise
    return settings, engine, ctx, client
