"""Issue 41, L4: a push URL is a credential as often as not (a secret path, `?token=`), so it
is never logged and is sealed at rest.

Before, httpx logged `HTTP Request: POST <the whole URL>` at INFO on every delivery, and
`a2a_push_config.url` was stored in the clear beside its sealed token. Now the HTTP
client's request lines carry the URL's origin only (core/logs.py), and the URL is sealed
(store/sealed.PUSH_URL): migration 0016 seals the rows stored before, rotation re-seals
them and seals one an older API process wrote in the clear."""

import asyncio
import logging
import uuid
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from sqlalchemy import text

from agentrt.core.logs import UrlsWithoutSecrets, withhold_urls
from agentrt.store.a2a.push import A2APushStore
from agentrt.store.db import migrate
from agentrt.store.db.engine import make_engine
from agentrt.store.db.open import open_store
from agentrt.store.db.sealing import Sealer
from agentrt.store.security.rotate import rotate
from tests._db import scratch_database
from tests.api.conftest import Live, user_message
from tests.api.test_push import receiving

SECRET_PATH = "T0CANARYpath9f3e"
SECRET_TOKEN = "CANARYtok0a1b2c"


def _secret_url(base: str) -> str:
    return f"{base}/hooks/{SECRET_PATH}?token={SECRET_TOKEN}"


async def test_a_delivery_logs_no_part_of_the_push_url_and_the_url_is_sealed(
    live: Live, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    async with receiving() as (hook, receiver):
        url = _secret_url(hook.removesuffix("/hook"))
        sent = await live.rpc("SendMessage", {
            "message": user_message("order 4?"),
            "configuration": {"returnImmediately": True,
                              "taskPushNotificationConfig": {"id": "c1", "url": url}},
        })  # fmt: skip
        task_id = sent["result"]["task"]["id"]
        for _ in range(400):
            if len(receiver.accepted) >= 2:
                break
            await asyncio.sleep(0.05)
        assert len(receiver.accepted) >= 2, "the webhook was not called"
        got = await live.rpc("GetTaskPushNotificationConfig", {"taskId": task_id, "id": "c1"})
    assert got["result"]["url"] == url  # its owner reads it back whole
    # At DEBUG too: the A2A SDK's line with the whole request body is dropped.
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "HTTP Request: POST http://127.0.0.1:" in logged  # the line is there, cut
    for secret in (SECRET_PATH, SECRET_TOKEN, "/hooks/"):
        assert secret not in logged, secret
    with live.parts.ctx.sessions() as s:
        raw = s.execute(
            text("SELECT url FROM a2a_push_config WHERE task_id = :t"), {"t": task_id}
        ).scalar_one()
    assert raw.startswith("s1.") and SECRET_PATH not in raw and SECRET_TOKEN not in raw


def test_the_filter_cuts_every_url_in_an_http_clients_record_to_its_origin() -> None:
    withhold_urls()
    withhold_urls()  # idempotent
    assert sum(isinstance(f, UrlsWithoutSecrets) for f in logging.getLogger("httpx").filters) == 1
    record = logging.LogRecord(
        "httpx", logging.INFO, __file__, 1, 'HTTP Request: %s %s "%s %d %s"',
        ("POST", httpx.URL(f"https://[2001:db8::1]:8443/{SECRET_PATH}?token={SECRET_TOKEN}"),
         "HTTP/1.1", 200, "OK"), None,
    )  # fmt: skip
    UrlsWithoutSecrets().filter(record)
    shown = record.getMessage()
    assert (
        shown == 'HTTP Request: POST https://[2001:db8::1]:8443/(path withheld) "HTTP/1.1 200 OK"'
    )


@pytest.fixture
def own_db(tmp_path: Path) -> Iterator[str]:
    with scratch_database("pushurl", tmp_path / "pushurl.db") as url:
        yield url


def _insert_plain_config(engine: object, task_id: str, url: str, history: str = "x") -> None:
    now = datetime.now(UTC)
    with engine.begin() as conn:  # type: ignore[attr-defined]
        conn.execute(
            text(
                "INSERT INTO a2a_task (id, context_id, workflow_id, owner, profile, "
                "answer_level, state, history, task_metadata, status_at, run_revision, "
                "journal_head, created_at, updated_at) VALUES (:id, 'ctx', :wf, 'alice', 'p', "
                "'full', 'TASK_STATE_SUBMITTED', :h, '{}', :now, -1, -1, :now, :now)"
            ),
            {"id": task_id, "wf": str(uuid.uuid4()), "now": now, "h": history},
        )
        conn.execute(
            text(
                "INSERT INTO a2a_push_config (task_id, id, url, delivered_through, created_at) "
                "VALUES (:t, 'c1', :u, -1, :now)"
            ),
            {"t": task_id, "u": url, "now": now},
        )


def test_migration_0016_seals_the_urls_stored_before_and_they_read_back(own_db: str) -> None:
    sealer = Sealer({"k": b"m" * 32}, "k")
    engine = make_engine(own_db)
    task_id, url = str(uuid.uuid4()), _secret_url("https://hooks.example.com")
    try:
        migrate.upgrade(engine, "0015")  # the schema before: URLs in the clear
        _insert_plain_config(engine, task_id, url)
        migrate.upgrade(engine, "head", sealer=sealer)
        with engine.connect() as conn:
            raw = conn.execute(text("SELECT url FROM a2a_push_config")).scalar_one()
        assert raw.startswith("s1.k.") and SECRET_TOKEN not in raw
        store = open_store(own_db, sealer)
        try:
            [cfg] = A2APushStore(store[1]).configs(task_id)
            assert cfg.url == url
        finally:
            store[0].dispose()
        migrate.downgrade(engine, "0015", sealer=sealer)  # and back, for the older code
        with engine.connect() as conn:
            assert conn.execute(text("SELECT url FROM a2a_push_config")).scalar_one() == url
    finally:
        engine.dispose()


def test_rotation_seals_a_url_an_older_api_wrote_in_the_clear(own_db: str) -> None:
    old, new = b"o" * 32, b"n" * 32
    engine, ctx = open_store(own_db, Sealer({"old": old}, "old"))
    task_id, url = str(uuid.uuid4()), _secret_url("https://hooks.example.com")
    try:
        history = ctx.sealer.seal("[]", table="a2a_task", column="history", row=task_id)
        _insert_plain_config(engine, task_id, url, history)  # as an API before 0016 did
        both = replace(ctx, sealer=Sealer({"new": new, "old": old}, "new"))
        assert rotate(both)["a2a_push_config.url"] == 1
        with engine.connect() as conn:
            raw = conn.execute(text("SELECT url FROM a2a_push_config")).scalar_one()
        assert raw.startswith("s1.new.")
        only_new = replace(ctx, sealer=Sealer({"new": new}, "new"))
        assert A2APushStore(only_new).configs(task_id)[0].url == url
    finally:
        engine.dispose()
