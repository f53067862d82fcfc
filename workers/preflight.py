"""`agentrt-worker --check`: validate what the worker needs before it starts, changing
nothing (no migration, no key file, no data directory). Each finding is one line."""

from collections.abc import Callable

from sqlalchemy.engine import make_url
from temporalio.api.workflowservice.v1 import DescribeNamespaceRequest
from temporalio.service import RPCError, RPCStatusCode

from agentrt.contracts.errors import ConfigError
from agentrt.core.profiles import load_profiles
from agentrt.core.settings import Settings
from agentrt.core.temporal import connect
from agentrt.store.open import probe_database
from agentrt.store.sealing import Sealer

_DATABASE = {
    "migrated": "schema present",
    "empty": "reachable, no schema yet (the worker migrates it at start)",
    "absent": "no file yet (the worker creates it at start)",
}


async def check(settings: Settings, emit: Callable[[str], None]) -> None:
    """Emit one line per finding, in the order the worker meets them; the first problem is
    a typed error (ConfigError, StoreUnavailableError, TemporalUnavailableError)."""
    if settings.privacy.seal_keys is not None or settings.seal_key_file().exists():
        try:
            sealer = Sealer.from_b64(settings.read_seal_keys())
        except ValueError as exc:
            raise ConfigError(f"AGENTRT_SEAL_KEYS: {exc}") from None
        emit(f"seal keys: active key {sealer.active!r}")
    else:
        where = settings.seal_key_file().resolve()
        emit(f"seal keys: none yet (the worker creates {where})")
    try:
        settings.providers.answer_levels()
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    profiles = load_profiles(settings.worker.profiles_file)
    emit(f"profiles: {', '.join(sorted(profiles))} ({settings.worker.profiles_file})")
    url = settings.database.resolved_url()
    shown = make_url(url).render_as_string(hide_password=True)
    emit(f"database {shown}: {_DATABASE[probe_database(url)]}")
    client = await connect(settings)
    try:
        await client.workflow_service.describe_namespace(
            DescribeNamespaceRequest(namespace=settings.temporal.namespace)
        )
    except RPCError as exc:
        if exc.status is not RPCStatusCode.NOT_FOUND:
            raise
        raise ConfigError(
            f"Temporal at {settings.temporal.address} has no namespace "
            f"{settings.temporal.namespace!r}: set AGENTRT_TEMPORAL_NAMESPACE"
        ) from None
    emit(
        f"temporal: {settings.temporal.address} namespace {settings.temporal.namespace}, "
        f"task queue {settings.temporal.task_queue}"
    )
