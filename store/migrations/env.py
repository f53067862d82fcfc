"""Alembic environment. The connection or URL is handed in by store.db.migrate, or read from
settings when run as `alembic upgrade head` (an entry point)."""

from alembic import context
from sqlalchemy import Connection

from agentrt.store.db.engine import make_engine
from agentrt.store.db.tables import Base

config = context.config
target_metadata = Base.metadata


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        compare_type=True,
        render_as_batch=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def main() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    url = config.get_main_option("sqlalchemy.url")
    if not url:
        from agentrt.core.settings import Settings

        url = Settings().database.url
    engine = make_engine(url)
    with engine.connect() as conn:
        _run(conn)
    engine.dispose()


main()
