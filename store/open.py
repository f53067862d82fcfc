"""Open the store: connect (a clear error if the database is down), bring the schema to head
and hand back the context every store module shares. Used by workers, the CLI and the API."""

from collections.abc import Callable

from sqlalchemy import Engine, text
from sqlalchemy.exc import OperationalError

from agentrt.contracts.errors import StoreUnavailableError
from agentrt.store import migrate
from agentrt.store.context import StoreContext, no_faults
from agentrt.store.engine import make_engine, make_sessionmaker
from agentrt.store.sealing import Sealer


def open_store(
    url: str,
    sealer: Sealer,
    *,
    faults: Callable[[str], None] | None = None,
    run_migrations: bool = True,
) -> tuple[Engine, StoreContext]:
    """Connect (a clear error if the database is down) and bring the schema to head."""
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except OperationalError as exc:
        engine.dispose()
        raise StoreUnavailableError(
            f"cannot reach the database at {engine.url.render_as_string(hide_password=True)}"
        ) from exc
    if run_migrations:
        migrate.upgrade(engine)
    ctx = StoreContext(make_sessionmaker(engine), sealer, faults or no_faults)
    return engine, ctx
