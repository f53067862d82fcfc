"""Issue 43 item 2: a remote agent's skill is a non-idempotent write behind the fence. The
caller's worker PROCESS is SIGKILLed at a step of the call, a fresh worker settles the run,
and the remote (agentrt's own A2A server, in another process) made ONE task:
- after the send, before the step is recorded: the probe finds the call's task by its
  contextId (derived from the idempotency key) and records its result;
- after the claim, before the send: the probe finds no task, the write is sent again
  under the same key, the same messageId;
- after the operator's answer to a remote's question was sent (the continuation, the same
  fenced write): the probe still asks the remote for the call's task and records its
  result; the remote made one task, and took the answer once. The remote's streamed text
  reached the run's live channel before the worker died."""

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from agentrt.contracts.enums import RunStatus
from agentrt.core.settings import Settings
from agentrt.store.live.table import LiveStore
from tests._db import migrated, scratch_database
from tests.activities._remote import Remote, caller_env, remote_agentrt, servers_file
from tests.fence._kill import Killer
from tests.workers._proc import wait_for_marker
from tests.workflows._waiting import until_status

pytestmark = pytest.mark.timeout(120)


@pytest_asyncio.fixture
async def sides(
    killer: Killer,
    client: Client,
    temporal_env: WorkflowEnvironment,
    settings: Settings,
    tmp_path: Path,
) -> AsyncIterator[tuple[Remote, dict[str, str]]]:
    """The remote, and the caller workers' environment (its card pinned)."""
    address, tmp = temporal_env.client.service_client.config.target_host, tmp_path
    with scratch_database("remote", tmp / "remote.db") as url:
        migrated(url)
        async with remote_agentrt(client, address, settings, tmp, url) as remote:
            servers = servers_file(tmp / "servers.yaml", remote.url, await remote.digest())
            full = caller_env(settings, address, killer.task_queue, servers)
            own = {k: v for k, v in full.items() if k.startswith(("AGENTRT_", "PARTNER"))}
            own.pop("AGENTRT_FAULT_BLOCK_AT", None)
            yield remote, own


@pytest.mark.parametrize("point", ["write.after_effect", "write.after_claim"])
async def test_a_killed_remote_call_makes_one_remote_task(
    point: str, killer: Killer, sides: tuple[Remote, dict[str, str]]
) -> None:
    remote, own = sides
    killed = await killer.kill_at(point, "Please get a quote", "delegator-auto", own)
    fresh = killer.fresh(**own)
    done = await killer.settle(killed.run_id, fresh, within=90)
    assert done.status is RunStatus.COMPLETED, (done, fresh.log_tail())
    assert done.answer == "The partner quoted order 1042."
    tools = [e for e in await killer.runtime.events(killed.run_id) if e.kind.value == "tool"]
    assert len(tools) == 1 and "4999" in str(tools[0].payload), tools
    # After the send, the probe's answer is the step; before it, the resend's result.
    assert tools[0].payload.get("reconciled", False) is (point == "write.after_effect")
    assert remote.tasks() == 1, "the remote made a second task"


async def test_a_call_killed_after_sending_the_operators_answer_is_reconciled(
    killer: Killer, sides: tuple[Remote, dict[str, str]]
) -> None:
    remote, own = sides
    point = "write.after_effect"  # first reached by the continuation: the first turn asked
    faulty = killer.armed(point, own)
    run_id = await killer.runtime.start("delegator-auto", "Please get a quote in another currency")
    await until_status(killer.runtime, run_id, RunStatus.WAITING_FOR_INPUT, within=60)
    await killer.runtime.submit_input(run_id, message_id="op-1", text="EUR", sent_by="o")
    await wait_for_marker(killer.markers / point, faulty, within=60.0)
    # The remote's text streamed to the run's live channel before the step is recorded:
    # the answer's turn (the call's second attempt on the live table).
    live = LiveStore(killer.parts.ctx).read(run_id)
    streamed = "".join(d.text for d in live if d.kind == "delta" and d.attempt == 2)
    assert "4599" in streamed, live
    faulty.kill()
    fresh = killer.fresh(**own)
    done = await killer.settle(run_id, fresh, within=90)
    assert done.status is RunStatus.COMPLETED, (done, fresh.log_tail())
    (tool,) = [e for e in await killer.runtime.events(run_id) if e.kind.value == "tool"]
    assert "4599" in str(tool.payload) and tool.payload.get("reconciled"), tool.payload
    assert remote.tasks() == 1, "the remote made a second task"
