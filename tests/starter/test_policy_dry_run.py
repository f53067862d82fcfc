"""`agentrt policies dry-run` (issue 44, item 3): a policy judged against a profile's past
approval-bound turns (runs decided by a policy and by people), printing what it would
have decided beside what was decided; a malformed policy is refused with Cedar's reason."""

import uuid
from pathlib import Path

import pytest
from temporalio.client import Client

from agentrt import Settings
from agentrt.contracts.enums import RunStatus
from tests.conftest import TEST_SEAL_KEYS
from tests.starter.test_cli import agentrt
from tests.workflows._policy import refunder, serving
from tests.workflows._waiting import pending_digest, until_status

STRICT = """
permit(principal, action == Action::"deny", resource == Tool::"issue_refund")
  when { context.args.amount_cents > 100 && context.initiator != "boss" };
"""


@pytest.fixture
def store_env(monkeypatch: pytest.MonkeyPatch, database_url: str) -> None:
    monkeypatch.setenv("AGENTRT_DATABASE_URL", database_url)
    monkeypatch.setenv("AGENTRT_SEAL_KEYS", TEST_SEAL_KEYS)
    monkeypatch.setenv("COLUMNS", "250")


async def test_a_dry_run_shows_what_a_policy_would_have_decided_on_past_runs(
    client: Client,
    settings: Settings,
    tmp_path: Path,
    store_env: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    name = f"pol-dry-{uuid.uuid4().hex[:6]}"
    async with serving(client, settings, tmp_path, [refunder(name)]) as s:
        small = await s.refund(name, "small", RunStatus.COMPLETED)
        large = await s.refund(name, "large", RunStatus.WAITING_FOR_APPROVAL)
        digest = pending_digest(large)
        for person in ("bob", "carol"):
            await s.runtime.approve(large.run_id, approved=True, decided_by=person,
                                    turn_digest=digest)  # fmt: skip
        await until_status(s.runtime, large.run_id, RunStatus.COMPLETED)
    strict = tmp_path / "strict.cedar"
    strict.write_text(STRICT)
    code, out, err = await agentrt(
        capsys, "policies", "dry-run", "--policy", str(strict), "--profile", name,
        "--name", "refunds@4",
    )  # fmt: skip
    assert code == 0, err
    lines = out.splitlines()
    small_line = next(x for x in lines if x.startswith(small.run_id))
    large_line = next(x for x in lines if x.startswith(large.run_id))
    assert "would deny; was approved by policy refunds@3" in small_line
    assert "would deny; was approved by carol" in large_line
    assert "2 approval-bound turn(s)" in out and "refunds@4" in out

    code, out, _ = await agentrt(
        capsys, "policies", "dry-run", "--policy", str(strict), "--profile", name,
        "--limit", "1",
    )  # fmt: skip
    assert code == 0 and large.run_id in out and small.run_id not in out


async def test_a_dry_run_of_a_malformed_policy_is_refused_with_the_reason(
    tmp_path: Path, store_env: None, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.cedar"
    bad.write_text("permit(principal, action, resource when {")
    code, _, err = await agentrt(
        capsys, "policies", "dry-run", "--policy", str(bad), "--profile", "x"
    )
    assert code != 0 and "approval policy bad@dry-run: " in err and "when" in err
