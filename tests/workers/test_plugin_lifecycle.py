"""Issue 42 item 1: the plugin holds nothing until its worker runs and never migrates. Made
over a database that does not exist, it creates nothing; its worker's run stops with a
SchemaBehindError naming `agentrt migrate`, before polling, leaving the database as it was.
A schema that is behind (an older revision) is refused the same way."""

import uuid
from pathlib import Path

import pytest
from sqlalchemy import text
from temporalio.client import Client
from temporalio.worker import Worker

from agentrt import AgentrtPlugin, SchemaBehindError, Settings
from agentrt.store.db import migrate
from agentrt.store.db.engine import make_engine
from agentrt.store.db.open import check_worker_store
from tests._db import backend, scratch_database


def _own(settings: Settings, url: str) -> Settings:
    return settings.replace(
        database={"url": url}, temporal={"task_queue": f"tq-{uuid.uuid4().hex[:10]}"}
    )


async def test_a_plugin_over_no_database_creates_nothing_and_its_worker_names_the_command(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    if backend() == "postgres":
        pytest.skip("a missing file is SQLite's case; the empty schema below is both's")
    file = tmp_path / "none" / "agentrt.db"
    plugin = AgentrtPlugin(_own(settings, f"sqlite:///{file}"))
    worker = Worker(client, task_queue=plugin.settings.temporal.task_queue, plugins=[plugin])
    assert not file.exists() and not file.parent.exists()  # made: nothing opened
    with pytest.raises(SchemaBehindError, match="agentrt migrate"):
        await worker.run()
    assert not file.exists()
    executor = plugin.resources.executor
    assert executor is not None
    with pytest.raises(RuntimeError, match="shutdown"):  # the run closed what it made
        executor.submit(int, "1")


async def test_a_worker_on_a_schema_behind_stops_before_polling_and_migrates_nothing(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    with scratch_database("behind", tmp_path / "behind.db") as url:
        engine = make_engine(url)
        try:
            migrate.upgrade(engine, "0016")  # one revision behind this release's head
            plugin = AgentrtPlugin(_own(settings, url))
            worker = Worker(client, task_queue=plugin.settings.temporal.task_queue,
                            plugins=[plugin])  # fmt: skip
            with pytest.raises(SchemaBehindError, match=r"0016.*`agentrt migrate`"):
                await worker.run()
            with engine.connect() as conn:
                version = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
            assert version is not None and version.startswith("0016")
            migrate.upgrade(engine)  # the explicit step; then the check passes
            check_worker_store(engine)
        finally:
            engine.dispose()


def test_the_error_is_typed_for_every_client() -> None:
    from agentrt.contracts.errors import StoreUnavailableError, by_code

    assert issubclass(SchemaBehindError, StoreUnavailableError)
    assert by_code("schema_behind") is SchemaBehindError
