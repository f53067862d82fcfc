"""The official JavaScript client (@a2a-js/sdk, npm) against the live server: send, stream,
get, list, cancel, and TaskNotFound as a typed error. Installs its pinned package with
`npm ci` from the committed lockfile when node_modules is missing (CI runs on a clean
clone)."""

import asyncio
import json
import shutil
import subprocess
from pathlib import Path

from tests.api.conftest import KEYS, Live

JS = Path(__file__).resolve().parents[1] / "js"


def _install() -> None:
    if (JS / "node_modules" / "@a2a-js" / "sdk").is_dir():
        return
    npm = shutil.which("npm")
    assert npm is not None, "npm is needed for the JavaScript client test"
    subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund"], cwd=JS, check=True, timeout=300,
        capture_output=True,
    )  # fmt: skip


async def test_the_javascript_client_sends_streams_gets_lists_and_cancels(live: Live) -> None:
    node = shutil.which("node")
    assert node is not None, "node is needed for the JavaScript client test"
    await asyncio.to_thread(_install)
    proc = await asyncio.create_subprocess_exec(
        node, str(JS / "a2a_client.mjs"), live.url, KEYS["alice"],
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 90)
    assert proc.returncode == 0, err.decode()
    result = json.loads(out.decode().strip().splitlines()[-1])
    assert result["send"]["state"] == "TASK_STATE_COMPLETED"
    assert result["send"]["text"] == "Order 1042 was delivered; its total was 49.99."
    assert result["stream"][0] == "task:TASK_STATE_SUBMITTED"
    assert result["stream"][-1] == "status:TASK_STATE_COMPLETED"
    assert "artifactUpdate" in result["stream"]
    assert result["get"] == {"state": "TASK_STATE_COMPLETED", "history": 1}
    assert result["list"] == {"ids": [result["send"]["id"]], "total": 1, "next": ""}
    assert result["cancel"] == {"state": "TASK_STATE_CANCELED"}
    assert result["notFound"] == "JsonRpcTaskNotFoundError"
