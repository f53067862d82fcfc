"""`agentrt-worker --list-tools` (issue 27 item 5): before any run, every tool the worker
would load, read the way the worker reads it, with its effect, where the effect came from
(declared, MCP annotation, override, default), whether approval binds it in each profile
that offers it, and its probe. A real process, a real MCP server (stdio); the database URL
points nowhere, so the listing is seen to need no database and to write nothing."""

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from agentrt.core.settings import Settings
from tests.activities.mcp_servers import stdio_server
from tests.workers._proc import worker_env

PROFILES = {
    "profiles": [
        {"name": "desk", "model": "scripted:demo", "approval": "writes",
         "tools": ["stamp_letter", "put_note", "shop.lookup", "shop.charge", "issue_refund"]},
        {"name": "auto", "model": "scripted:demo", "approval": "none", "tools": ["stamp_letter"]},
    ]
}  # fmt: skip


@pytest.mark.timeout(90)
def test_every_loaded_tool_with_its_effect_its_source_its_approval_and_its_probe(
    settings: Settings, tmp_path: Path
) -> None:
    servers = [
        stdio_server("shop", tmp_path / "shop.jsonl",
                     effects={"lying_read": "NON_IDEMPOTENT_WRITE"}),
        stdio_server("raw", tmp_path / "raw.jsonl", trust_annotations=False),
    ]  # fmt: skip
    (tmp_path / "mcp.yaml").write_text(yaml.safe_dump({"servers": servers}))
    (tmp_path / "profiles.yaml").write_text(yaml.safe_dump(PROFILES))
    env = worker_env(settings, temporal_address="127.0.0.1:9", task_queue="unused")
    env.update(
        AGENTRT_DATABASE_URL="postgresql+psycopg://nobody@127.0.0.1:9/none",
        AGENTRT_PROFILES_FILE=str(tmp_path / "profiles.yaml"),
        AGENTRT_MCP_SERVERS_FILE=str(tmp_path / "mcp.yaml"),
        AGENTRT_TOOLBOXES="tests.workers._tool_list_samples:toolbox",
    )
    proc = subprocess.run(
        [sys.executable, "-m", "agentrt.workers", "--list-tools"], env=env,
        cwd=Path(__file__).resolve().parents[2], capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = [re.split(r"\s{2,}", line) for line in proc.stdout.splitlines()]
    assert lines[0] == ["TOOL", "TOOLBOX", "EFFECT", "FROM", "APPROVAL", "PROBE"]
    table = {row[0]: row[1:] for row in lines[1:]}
    assert table["stamp_letter"] == [
        "samples", "NON_IDEMPOTENT_WRITE", "default", "auto: no; desk: yes", "-"
    ]  # fmt: skip
    assert table["put_note"] == ["samples", "IDEMPOTENT_WRITE", "declared", "desk: yes",
                                 "find_note"]  # fmt: skip
    assert table["shop.lookup"] == ["shop", "READ_ONLY", "MCP annotation", "desk: no", "-"]
    assert table["shop.put"] == ["shop", "IDEMPOTENT_WRITE", "MCP annotation", "-", "-"]
    assert table["shop.charge"] == ["shop", "NON_IDEMPOTENT_WRITE", "default", "desk: yes", "-"]
    assert table["shop.lying_read"] == ["shop", "NON_IDEMPOTENT_WRITE", "override", "-", "-"]
    # Annotations not trusted: every tool of the server is a non-idempotent write.
    assert table["raw.lookup"] == ["raw", "NON_IDEMPOTENT_WRITE", "default", "-", "-"]
    assert table["issue_refund"][1:4] == ["NON_IDEMPOTENT_WRITE", "declared", "desk: yes"]
    assert "Traceback" not in proc.stderr


@pytest.mark.timeout(60)
def test_a_profile_naming_a_tool_nobody_loads_fails_as_the_worker_would(
    settings: Settings, tmp_path: Path
) -> None:
    bad = {"profiles": [{"name": "x", "model": "scripted:demo", "tools": ["nowhere"]}]}
    (tmp_path / "profiles.yaml").write_text(yaml.safe_dump(bad))
    env = worker_env(settings, temporal_address="127.0.0.1:9", task_queue="unused")
    env["AGENTRT_PROFILES_FILE"] = str(tmp_path / "profiles.yaml")
    proc = subprocess.run(
        [sys.executable, "-m", "agentrt.workers", "--list-tools"], env=env, cwd=tmp_path,
        capture_output=True, text=True, timeout=45,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "nowhere" in proc.stderr and "Traceback" not in proc.stderr
