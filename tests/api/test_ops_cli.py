"""`agentrt --api URL` runs the CLI's commands through the operator API as a token's
principal, with no database or Temporal credentials; `agentrt-api token` manages tokens."""

import asyncio
import json
from pathlib import Path

import pytest

from agentrt.api.main import main as api_main
from agentrt.starter.cli import main as cli_main
from agentrt.store.demo import DemoWorld
from agentrt.store.security.principals import PrincipalStore, TokenRow, token_digest
from tests.api.conftest import Live
from tests.api.ops_helpers import REFUND, admin_env, name, token


async def _agentrt(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = await asyncio.to_thread(cli_main, list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def no_backends(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Nothing but the API is reachable: a client that touched either would fail."""
    monkeypatch.setenv("AGENTRT_DATABASE_URL", "postgresql+psycopg://nobody@127.0.0.1:9/none")
    monkeypatch.setenv("AGENTRT_TEMPORAL_ADDRESS", "127.0.0.1:9")
    monkeypatch.setenv("AGENTRT_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.delenv("AGENTRT_SEAL_KEYS", raising=False)


@pytest.mark.usefixtures("no_backends")
async def test_run_inbox_approve_status_through_the_api(
    live: Live, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    alice, bob = name("alice"), name("bob")
    starter = token(live, alice, "runs:start", "runs:read")
    approver = token(live, bob, "runs:read-all", "runs:decide")
    api = ["--api", live.url]
    code, out, err = await _agentrt(capsys, *api, "--token", starter, "start", "guarded", REFUND)
    assert code == 0, err
    run_id = out.strip()

    monkeypatch.setenv("AGENTRT_API_TOKEN", approver)  # the default token
    listed: list[dict[str, object]] = []
    for _ in range(200):
        code, out, err = await _agentrt(capsys, *api, "inbox", "--json")
        assert code == 0, err
        listed = [json.loads(line) for line in out.splitlines() if line.strip()]
        if any(r["run_id"] == run_id for r in listed):
            break
        await asyncio.sleep(0.05)
    mine = next(r for r in listed if r["run_id"] == run_id)
    assert mine["initiator"] == alice

    code, out, err = await _agentrt(capsys, *api, "approve", run_id, "--by", "mallory")
    assert code == 2 and "drop --by" in err  # the token's principal decides, not a flag
    code, out, err = await _agentrt(capsys, *api, "--token", starter, "approve", run_id)
    assert code == 2 and "runs:decide" in err and "Traceback" not in err
    code, out, err = await _agentrt(capsys, *api, "approve", run_id, "--reason", "ok")
    assert code == 0, err
    assert f"as {bob}" in out
    status: dict[str, object] = {}
    for _ in range(200):
        code, out, err = await _agentrt(capsys, *api, "status", run_id, "--json")
        assert code == 0, err
        status = json.loads(out)
        if status["status"] == "COMPLETED":
            break
        await asyncio.sleep(0.05)
    assert status["status"] == "COMPLETED"
    assert DemoWorld(live.parts.ctx).ledger_count(run_id=run_id) == 1
    code, out, err = await _agentrt(capsys, *api, "events", run_id, "--json")
    assert code == 0, err
    audit = [json.loads(line) for line in out.splitlines() if '"approval"' in line]
    assert audit[0]["payload"]["decided_by"] == bob
    assert audit[0]["payload"]["authenticated"] is True
    code, out, err = await _agentrt(capsys, *api, "--token", "agrt_bad", "status", run_id)
    assert code == 2 and "401" in err


def test_token_create_list_revoke(
    live: Live, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    admin_env(monkeypatch, live)
    who = name("carol")

    def run(*argv: str) -> tuple[int | str | None, str, str]:
        capsys.readouterr()
        with pytest.raises(SystemExit) as done:
            api_main(list(argv))
        out, err = capsys.readouterr()
        return done.value.code, out, err

    code, out, err = run(
        "token", "create", "--principal", who, "--scope", "runs:decide",
        "--scope", "runs:read", "--expires-in-days", "1",
    )  # fmt: skip
    assert code == 0, err
    secret = out.strip()
    store = PrincipalStore(live.parts.ctx)
    found = store.authenticate(secret)
    assert found is not None and found.principal == who
    assert found.scopes == {"runs:decide", "runs:read"}
    with live.parts.ctx.sessions() as s:  # only its digest is stored
        row = s.get(TokenRow, found.id)
        assert row is not None and row.digest == token_digest(secret)
        assert secret not in " ".join(str(v) for v in vars(row).values())
    code, out, _ = run("token", "list", "--principal", who)
    assert code == 0 and found.id in out and "active" in out and secret not in out
    assert run("token", "revoke", found.id)[0] == 0
    assert store.authenticate(secret) is None
    code, _, err = run("token", "revoke", found.id)
    assert code == 2 and "no active token" in err
    code, _, err = run("token", "create", "--principal", "bad name", "--scope", "runs:read")
    assert code == 2 and "principal" in err
    with pytest.raises(SystemExit):  # argparse refuses an unknown scope
        api_main(["token", "create", "--principal", who, "--scope", "runs:everything"])
