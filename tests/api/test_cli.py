"""`agentrt-api` sub-commands that need no server: hash-key, purge, rotate."""

import asyncio

import pytest

from agentrt.api.main import main
from agentrt.api.settings import ApiSettings, key_digest
from tests.api.conftest import Live, user_message
from tests.conftest import TEST_SEAL_KEYS


def _env(monkeypatch: pytest.MonkeyPatch, settings: ApiSettings) -> None:
    monkeypatch.setenv("AGENTRT_DATABASE_URL", settings.database.url)
    monkeypatch.setenv("AGENTRT_SEAL_KEYS", TEST_SEAL_KEYS)
    monkeypatch.setenv("AGENTRT_DATA_DIR", str(settings.database.data_dir))


def test_hash_key_prints_the_digest_to_configure(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["hash-key", "alice-secret"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == key_digest("alice-secret")


async def test_purge_by_run_id_removes_the_task(
    live: Live, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    reply = await live.rpc("SendMessage", {"message": user_message("order 11?")})
    task_id = reply["result"]["task"]["id"]
    rec = live.store.get(task_id, None)
    assert rec is not None
    _env(monkeypatch, live.settings)
    with pytest.raises(SystemExit):
        await asyncio.to_thread(main, ["purge", rec.workflow_id])
    assert "removed 1 run(s)" in capsys.readouterr().out
    gone = await live.rpc("GetTask", {"id": task_id})
    assert gone["error"]["code"] == -32001
