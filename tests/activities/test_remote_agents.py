"""Issue 43 item 2: a remote A2A agent's skill as a tool, against agentrt's own A2A server
(`agentrt-api serve` in another process, its own database and worker). The caller's worker
runs in a process of its own, configured by a servers file that pins the remote's card:
- a run calls the skill after its write is approved; the remote's artifacts are the
  tool's result, and the remote made one task;
- an answer that breaks the skill's declared schema is the call's invalid_output, visible
  in the tool's result; the run goes on;
- a card that changed since it was pinned is refused: at start (its tools are not
  offered) and at a call the remote refused (the card checked again: the typed
  `card_changed`, nothing made); the run goes on, the remote made no task;
- a remote that is down makes its tools degraded, not the worker dead: the call fails
  with nothing sent, the run goes on."""

import uuid

import pytest

from agentrt.contracts.enums import RunStatus
from agentrt.contracts.profiles import Profile
from agentrt.contracts.views import EventView
from agentrt.starter.facade import AgentRuntime
from agentrt.store.ops.registry import ProfileRegistry
from tests.activities._remote import Sides, caller_env, servers_file, sides
from tests.workers._proc import WorkerProcess
from tests.workers.conftest import pool
from tests.workflows._waiting import until, until_status

__all__ = ["pool", "sides"]


pytestmark = pytest.mark.timeout(120)


async def _tool_events(runtime: AgentRuntime, run_id: str) -> list[EventView]:
    return [e for e in await runtime.events(run_id) if e.kind.value == "tool"]


async def _logged(worker: WorkerProcess, text: str) -> None:
    async def found() -> bool:
        return text in worker.log.read_text(errors="replace")

    await until(found, f"logged {text!r}:\n{worker.log_tail()}", within=60)


async def test_a_run_calls_the_remote_skill_after_its_approval(sides: Sides) -> None:
    worker = sides.caller(await sides.remote.digest())
    await _logged(worker, "remote agent partner is up: 1 skills")
    run_id = await sides.runtime.start("delegator", "Please get a quote")
    waiting = await until_status(sides.runtime, run_id, RunStatus.WAITING_FOR_APPROVAL, within=60)
    assert waiting.pending_approval is not None
    assert sides.remote.tasks() == 0  # behind the approval: nothing sent yet
    await sides.runtime.approve(
        run_id, approved=True, decided_by="bob", turn_digest=waiting.pending_approval.turn_digest
    )
    done = await sides.runtime.result(run_id)
    assert done.status is RunStatus.COMPLETED, done
    assert done.answer == "The partner quoted order 1042."
    tools = await _tool_events(sides.runtime, run_id)
    assert len(tools) == 1 and "4999" in str(tools[0].payload), tools
    assert not tools[0].payload.get("is_error"), tools[0].payload
    assert sides.remote.tasks() == 1


async def test_an_answer_outside_the_declared_schema_is_invalid_output(sides: Sides) -> None:
    worker = sides.caller(await sides.remote.digest())
    await _logged(worker, "remote agent partner is up")
    run_id = await sides.runtime.start("delegator-auto", "A broken quote, please")
    done = await sides.runtime.result(run_id)
    assert done.status is RunStatus.COMPLETED, done  # the call failed, not the run
    (tool,) = await _tool_events(sides.runtime, run_id)
    shown = str(tool.payload)
    assert "invalid_output" in shown and "outside its declared schema" in shown, shown
    assert tool.payload.get("is_error") is True, tool.payload
    assert sides.remote.tasks() == 1  # the remote acted once; nothing resent it


async def test_a_card_that_changed_since_it_was_pinned_is_refused(sides: Sides) -> None:
    stale = "sha256:" + "0" * 64
    worker = sides.caller(stale)
    await _logged(worker, "its card changed since it was pinned")
    assert worker.alive()
    run_id = await sides.runtime.start("delegator-auto", "Please get a quote")
    done = await sides.runtime.result(run_id)
    assert done.status is RunStatus.COMPLETED, done
    assert sides.remote.tasks() == 0


async def test_a_card_that_changes_while_the_worker_runs_is_refused_at_the_call(
    sides: Sides,
) -> None:
    """The card is not fetched at each call (a call is one request): the change shows when
    the remote refuses the send, the card is checked again and the call fails typed."""
    worker = sides.caller(await sides.remote.digest())
    await _logged(worker, "remote agent partner is up")
    # The remote no longer publishes the skill: its card is no longer the one pinned.
    gone = Profile(name="quoter", model="scripted:demo", publish=False, approval="none")
    ProfileRegistry(sides.remote.parts.ctx).register([gone], worker="someone-else")
    run_id = await sides.runtime.start("delegator-auto", "Please get a quote")
    done = await sides.runtime.result(run_id)
    assert done.status is RunStatus.COMPLETED, done
    (tool,) = await _tool_events(sides.runtime, run_id)
    assert "card changed since it was pinned" in str(tool.payload), tool.payload
    assert tool.payload.get("is_error") is True, tool.payload
    assert sides.remote.tasks() == 0


async def test_a_remote_that_is_down_degrades_its_tools_not_the_worker(sides: Sides) -> None:
    worker = sides.caller(await sides.remote.digest())
    await _logged(worker, "remote agent partner is up")
    sides.remote.stop()  # the remote API goes away
    run_id = await sides.runtime.start("delegator-auto", "Please get a quote")
    done = await sides.runtime.result(run_id)
    assert done.status is RunStatus.COMPLETED, done
    (tool,) = await _tool_events(sides.runtime, run_id)
    assert "cannot be reached" in str(tool.payload), tool.payload
    assert worker.alive()
    # A worker started while the remote is down starts, without the remote's tools.
    late = sides.caller(await _digest_unused(), url=sides.remote.url)
    await _logged(late, "remote agent partner is down")
    assert late.alive()


async def _digest_unused() -> str:
    return "sha256:" + "1" * 64


async def test_a_resend_is_the_same_message_and_the_probe_finds_its_task(sides: Sides) -> None:
    """The call's messageId is derived from the idempotency key: sent again (as after an
    unknown outcome), agentrt's server answers with the first task; the probe asks the
    remote for the task of that message."""
    from agentrt.activities.ports import ToolContext
    from agentrt.activities.toolbox.remote_agent import remote_tools
    from agentrt.activities.toolbox.remote_config import RemoteAgent
    from agentrt.activities.toolbox.remote_http import RemoteConnection
    from agentrt.core.outbound import Policy
    from tests.activities._remote import TOKEN

    agent = RemoteAgent(name="partner", url=sides.remote.url,
                        pinned_card_digest=await sides.remote.digest())  # fmt: skip
    conn = RemoteConnection(agent, TOKEN, Policy.parse("127.0.0.0/8", ""))
    try:
        (tool,) = remote_tools(conn, await conn.card())
        ctx = ToolContext(run_id="r-1", call_id="c-1", idempotency_key=f"k-{uuid.uuid4()}")
        args = {"message": "quote for order 1042"}
        first = await tool(args, ctx)
        again = await tool(args, ctx)
        assert first == again and "4999" in first
        assert sides.remote.tasks() == 1
        found = await tool.reconcile(args, ctx)
        assert found.verdict == "applied" and found.result == first
        other = ToolContext(run_id="r-1", call_id="c-2", idempotency_key=f"k-{uuid.uuid4()}")
        assert (await tool.reconcile(args, other)).verdict == "not_applied"
        assert sides.remote.tasks() == 1  # the probe only reads
    finally:
        await conn.close()


async def test_list_tools_shows_the_remote_skills_and_the_digest_to_pin(sides: Sides) -> None:
    """`agentrt-worker --list-tools` fetches the card as the worker does: the skill with its
    effect and probe; with a stale pin, the agent down with the digest an operator pins."""
    import asyncio

    from tests._entry import run_module

    digest = await sides.remote.digest()
    for pin in (digest, "sha256:" + "0" * 64):
        path = servers_file(sides.workdir / f"list-{pin[-4:]}.yaml", sides.remote.url, pin)
        env = caller_env(sides.settings, sides.address, sides.queue, path)
        done = await asyncio.to_thread(
            run_module, "agentrt.workers", ("--list-tools",), env=env, cwd=sides.workdir
        )
        assert done.returncode == 0, done.stderr
        if pin == digest:
            (line,) = [ln for ln in done.stdout.splitlines() if ln.startswith("partner.quoter")]
            assert "NON_IDEMPOTENT_WRITE" in line and "declared" in line, line
            assert "partner.quoter:task-of-message" in line and "delegator: yes" in line, line
        else:
            assert "(remote agent partner is down:" in done.stdout, done.stdout
            assert f"now {digest}" in done.stdout, done.stdout
