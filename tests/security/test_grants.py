"""Who may start what (issue 25): operator API tokens and A2A keys are granted profiles by
name or glob pattern; a start of a profile not granted is refused with nothing created; a
profile that writes without approval is covered only by a grant naming it; the shipped
profiles file has no such profile unless the demo's own file is chosen."""

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from sqlalchemy import func, select
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from agentrt.api.main import main as api_main
from agentrt.api.settings import ApiSettings
from agentrt.core.profiles import load_profiles
from agentrt.store.db.tables import RunRow
from agentrt.store.security.principals import PrincipalStore
from agentrt.workers.compose import WorkerResources
from bench.a2a_fixtures import FIXTURES
from tests._built import built
from tests._db import migrated, scratch_database
from tests.api.conftest import Live, _serve, user_message
from tests.api.ops_helpers import admin_env

WORKERS = Path(__file__).resolve().parents[2] / "workers"
LOOKUP = "What about order 7?"
# approval `none` with write tools: refunds run with no one's approval.
AUTONOMOUS = {
    "name": "autonomous",
    "instructions": "You act without approval.",
    "model": "scripted:demo",
    "tools": ["lookup_order", "set_record", "issue_refund"],
    "approval": "none",
    "publish": True,
}


def _who(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _token(live: Live, profiles: list[str], *scopes: str) -> str:
    wanted = list(scopes) or ["runs:start", "runs:read"]
    return PrincipalStore(live.parts.ctx).create(_who("p"), wanted, profiles=profiles)[1]


async def _start(live: Live, secret: str, profile: str) -> tuple[httpx.Response, str]:
    run_id = str(uuid.uuid4())
    async with httpx.AsyncClient(base_url=live.url, timeout=60) as http:
        reply = await http.post(
            "/runs",
            json={"profile": profile, "prompt": LOOKUP, "run_id": run_id},
            headers={"Authorization": f"Bearer {secret}"},
        )
    return reply, run_id


async def _created_nothing(live: Live, client: Client, run_id: str) -> None:
    assert live.runtime._runs.get(run_id) is None  # no run row
    with pytest.raises(RPCError) as missing:  # no workflow
        await client.get_workflow_handle(run_id).describe()
    assert missing.value.status == RPCStatusCode.NOT_FOUND


def _refused(reply: httpx.Response, profile: str) -> None:
    assert reply.status_code == 403, reply.text
    body: dict[str, Any] = reply.json()
    assert body["error"]["type"] == "profile_not_granted"
    assert profile in body["error"]["message"]


# --- a served file with a profile that writes without approval ---------------------------


@pytest.fixture(scope="module")
def autonomous_settings(
    a2a_settings: ApiSettings, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ApiSettings]:
    served = yaml.safe_load((FIXTURES / "profiles.yaml").read_text())
    served["profiles"].append(AUTONOMOUS)
    path = tmp_path_factory.mktemp("grants") / "profiles.yaml"
    path.write_text(yaml.safe_dump(served))
    # A database of its own: the worker registers `autonomous` there, where no other
    # test's API reads it (the suite's Agent Card lists exactly its fixtures' skills).
    db = tmp_path_factory.mktemp("grants-db") / "agentrt.db"
    with scratch_database("grants", db) as url:
        migrated(url)  # as `agentrt migrate` does: no worker migrates
        yield a2a_settings.replace(worker={"profiles_file": path}, database={"url": url})


@pytest.fixture(scope="module")
def autonomous_parts(autonomous_settings: ApiSettings) -> Iterator[WorkerResources]:
    with built(autonomous_settings) as resources:
        yield resources


# --- the operator API ------------------------------------------------------------------


async def test_start_of_an_ungranted_profile_is_403_and_creates_nothing(
    live: Live, client: Client
) -> None:
    secret = _token(live, ["helper", "red*"])
    reply, run_id = await _start(live, secret, "fallback")
    _refused(reply, "fallback")
    await _created_nothing(live, client, run_id)
    granted, _ = await _start(live, secret, "helper")  # named: served
    assert granted.status_code == 201, granted.text


async def test_a_token_with_no_profile_grant_starts_nothing(live: Live, client: Client) -> None:
    secret = _token(live, [])
    for profile in ("helper", "fallback"):
        reply, run_id = await _start(live, secret, profile)
        _refused(reply, profile)
        await _created_nothing(live, client, run_id)


async def test_a_pattern_grant_covers_matching_profiles_but_not_one_that_writes_unapproved(
    client: Client, autonomous_settings: ApiSettings, autonomous_parts: WorkerResources
) -> None:
    async with _serve(client, autonomous_settings, autonomous_parts) as live:
        everything = _token(live, ["*"])
        assert (await _start(live, everything, "helper"))[0].status_code == 201
        reply, run_id = await _start(live, everything, "autonomous")
        _refused(reply, "autonomous")
        assert "exactly" in reply.json()["error"]["message"]
        await _created_nothing(live, client, run_id)
        auto_star = _token(live, ["auto*"])
        reply, run_id = await _start(live, auto_star, "autonomous")
        _refused(reply, "autonomous")
        await _created_nothing(live, client, run_id)
        named = _token(live, ["autonomous"])
        reply, run_id = await _start(live, named, "autonomous")
        assert reply.status_code == 201, reply.text
        assert reply.json()["run_id"] == run_id
        admin = _token(live, [], "admin")  # admin may start anything, ungranted
        assert (await _start(live, admin, "autonomous"))[0].status_code == 201


async def test_a_repeat_start_of_an_ungranted_profile_is_refused_before_the_run_is_read(
    live: Live,
) -> None:
    # The grant is checked first: a run id of someone else's run tells an ungranted
    # caller nothing about that run (403, not 200 or 409).
    owner = _token(live, ["helper"])
    reply, run_id = await _start(live, owner, "helper")
    assert reply.status_code == 201
    other = _token(live, ["fallback"])
    async with httpx.AsyncClient(base_url=live.url, timeout=60) as http:
        again = await http.post(
            "/runs",
            json={"profile": "helper", "prompt": LOOKUP, "run_id": run_id},
            headers={"Authorization": f"Bearer {other}"},
        )
    _refused(again, "helper")


async def test_me_shows_the_profiles_a_token_may_start(live: Live) -> None:
    secret = _token(live, ["helper", "billing-*"])
    async with httpx.AsyncClient(base_url=live.url, timeout=60) as http:
        me = await http.get("/me", headers={"Authorization": f"Bearer {secret}"})
    assert me.status_code == 200
    assert me.json()["profiles"] == ["billing-*", "helper"]


def test_token_create_grants_profiles_by_name_and_pattern(
    live: Live, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    admin_env(monkeypatch, live)
    who = _who("carol")
    capsys.readouterr()
    with pytest.raises(SystemExit) as done:
        api_main(
            ["token", "create", "--principal", who, "--scope", "runs:start",
             "--profile", "support", "--profile", "billing-*"]
        )  # fmt: skip
    out, err = capsys.readouterr()
    assert done.value.code == 0, err
    found = PrincipalStore(live.parts.ctx).authenticate(out.strip())
    assert found is not None and found.profiles == {"support", "billing-*"}
    with pytest.raises(SystemExit) as listed:
        api_main(["token", "list", "--principal", who])
    assert listed.value.code == 0
    assert "billing-*,support" in capsys.readouterr().out


# --- A2A ---------------------------------------------------------------------------------


async def _a2a_tasks(live: Live, owner: str, context_id: str) -> int:
    return live.store.page(owner=owner, context_id=context_id).total


def _runs_of(live: Live, initiator: str) -> int:
    with live.parts.ctx.sessions() as s:
        q = select(func.count()).select_from(RunRow)
        return int(s.scalar(q.where(RunRow.initiator == initiator)) or 0)


async def _send(live: Live, who: str, skill: str) -> tuple[dict[str, Any], str]:
    context_id = str(uuid.uuid4())
    message = user_message(LOOKUP, contextId=context_id, metadata={"skill": skill})
    reply = await live.rpc(
        "SendMessage", {"message": message, "configuration": {"returnImmediately": True}}, who
    )
    return reply, context_id


def _a2a_refused(reply: dict[str, Any]) -> None:
    assert "result" not in reply, reply
    assert reply["error"]["code"] == -32004
    assert reply["error"]["data"][0]["reason"] == "PROFILE_NOT_GRANTED"


async def test_an_a2a_caller_not_granted_the_skill_gets_an_error_and_no_task_or_run(
    client: Client, a2a_settings: ApiSettings, a2a_parts: WorkerResources
) -> None:
    # alice may start `helper` only; bob is named nowhere, so he starts nothing.
    granted = a2a_settings.replace(api={"key_profiles": "alice=helper"})
    async with _serve(client, granted, a2a_parts) as live:
        runs_before = _runs_of(live, "a2a:alice"), _runs_of(live, "a2a:bob")
        for who, skill in (("alice", "fallback"), ("bob", "helper")):
            reply, context_id = await _send(live, who, skill)
            _a2a_refused(reply)
            assert await _a2a_tasks(live, who, context_id) == 0
        assert (_runs_of(live, "a2a:alice"), _runs_of(live, "a2a:bob")) == runs_before
        reply, context_id = await _send(live, "alice", "helper")
        assert "result" in reply, reply
        assert await _a2a_tasks(live, "alice", context_id) == 1


async def test_an_a2a_pattern_grant_does_not_cover_a_profile_that_writes_unapproved(
    client: Client, autonomous_settings: ApiSettings, autonomous_parts: WorkerResources
) -> None:
    star = autonomous_settings.replace(api={"key_profiles": "alice=*,bob=*|autonomous"})
    async with _serve(client, star, autonomous_parts) as live:
        reply, context_id = await _send(live, "alice", "autonomous")
        _a2a_refused(reply)
        assert await _a2a_tasks(live, "alice", context_id) == 0
        reply, context_id = await _send(live, "bob", "autonomous")
        assert "result" in reply, reply
        assert await _a2a_tasks(live, "bob", context_id) == 1


def test_a_bad_api_key_profiles_entry_is_a_config_error(a2a_settings: ApiSettings) -> None:
    for bad in ("alice", "alice=", "mallory=*"):
        with pytest.raises(ValueError, match="AGENTRT_API_KEY_PROFILES"):
            a2a_settings.replace(api={"key_profiles": bad}).api.grants()


# --- the rule itself, and the shipped files ----------------------------------------------


def test_a_grant_matches_names_and_patterns_and_an_unapproved_writer_only_by_name() -> None:
    from agentrt.api.grants import Grants

    profiles = load_profiles(WORKERS / "profiles.autonomous.yaml")
    support, autonomous = profiles["support"], profiles["support-autonomous"]
    assert autonomous.writes_unapproved and not support.writes_unapproved
    assert Grants.of(["supp*"]).allows(support)
    assert not Grants.of(["billing-*"]).allows(support)
    assert not Grants.of(["*", "support*", "support-autonomous*"]).allows(autonomous)
    assert Grants.of(["support-autonomous"]).allows(autonomous)
    assert Grants.of([], everything=True).allows(autonomous)
    assert not Grants().allows(support)


def test_the_shipped_profiles_file_has_no_profile_that_writes_without_approval() -> None:
    shipped = load_profiles(WORKERS / "profiles.yaml")
    # approval `none` with any tool (the API's fail-closed reading of "may write unapproved")
    assert [
        p.name for p in shipped.values() if p.approval == "none" and (p.tools or p.toolboxes)
    ] == []
    assert "support-autonomous" not in shipped


def test_the_demos_autonomous_file_is_the_shipped_one_plus_support_autonomous() -> None:
    shipped = load_profiles(WORKERS / "profiles.yaml")
    demo = load_profiles(WORKERS / "profiles.autonomous.yaml")
    assert {k: v for k, v in demo.items() if k != "support-autonomous"} == shipped
    assert demo["support-autonomous"].writes_unapproved
