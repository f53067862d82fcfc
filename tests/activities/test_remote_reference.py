"""Issue 43 item 2: a remote agent that is not agentrt, the a2a-sdk's reference server in
another process. Its skill is called as a tool and its artifact is the result; the probe
finds the call's task by its contextId. It does not deduplicate messages: a resend of the
same messageId makes a second task there. That is where the guarantee stops
(docs/guides/remote-agents.md): agentrt's side never resends blind (the fence), but after
a probe that found nothing, the resend is only as safe as the remote makes it."""

import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from a2a.types import ListTasksRequest

from agentrt.activities.ports import ToolContext
from agentrt.activities.toolbox.remote_agent import context_id, remote_tools
from agentrt.activities.toolbox.remote_config import RemoteAgent, card_digest
from agentrt.activities.toolbox.remote_http import CARD_PATH, RemoteConnection, canonical
from agentrt.core.outbound import Policy
from tests.workers.test_telemetry_process import free_port
from tests.workflows._waiting import until_found

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def reference(tmp_path: Path) -> Iterator[str]:
    port = free_port()
    log = (tmp_path / "reference.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.activities._reference_agent", str(port)],
        cwd=ROOT, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
    )  # fmt: skip
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        log.close()


async def _card_digest(url: str) -> str:
    async with httpx.AsyncClient(timeout=5) as http:

        async def served() -> str | None:
            try:
                reply = await http.get(f"{url}/{CARD_PATH}")
            except httpx.TransportError:
                return None
            return card_digest(canonical(reply.json())) if reply.status_code == 200 else None

        return await until_found(served, "the reference server's card served")


async def test_the_reference_server_is_called_probed_and_does_not_deduplicate(
    reference: str,
) -> None:
    agent = RemoteAgent(name="ref", url=reference, pinned_card_digest=await _card_digest(reference))
    conn = RemoteConnection(agent, None, Policy.parse("127.0.0.0/8", ""))
    try:
        (tool,) = remote_tools(conn, await conn.card())
        ctx = ToolContext(run_id="r-1", call_id="c-1", idempotency_key=f"k-{uuid.uuid4()}")
        args = {"message": "quote for order 1042"}
        assert (await tool.reconcile(args, ctx)).verdict == "not_applied"
        first = await tool(args, ctx)
        assert "4999" in first
        found = await tool.reconcile(args, ctx)
        assert found.verdict == "applied" and found.result == first
        await tool(args, ctx)  # the same messageId again
        client = await conn.client()
        asked = ListTasksRequest(context_id=context_id(ctx.idempotency_key))
        listed = await client.list_tasks(asked)
        assert len(listed.tasks) == 2  # not agentrt: the resend made a second task
    finally:
        await conn.close()
