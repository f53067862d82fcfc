"""Issue 43 item 2: a remote `input-required` pauses our run for the operator. The remote
(agentrt's own A2A server in another process) asks which currency; the caller's run waits
for input (WAITING_FOR_INPUT) with the remote's question in its INPUT_REQUESTED event; the
operator's attested answer is sent by the same fenced write, on the same remote task, as
the call's next turn (its messageId derived from the idempotency key and the turn), and
the remote's answer is the call's one result. The remote made one task; the answer is not
in the caller's transcript (it went to the remote)."""

import uuid

import pytest
from temporalio.client import Client

from agentrt.activities.ports import ToolContext, ToolNeedsInput
from agentrt.activities.toolbox.remote_agent import message_id, remote_tools
from agentrt.activities.toolbox.remote_config import RemoteAgent
from agentrt.activities.toolbox.remote_http import RemoteConnection
from agentrt.contracts.enums import RunStatus
from agentrt.contracts.ids import ACT_WRITE_WITHDRAW
from agentrt.contracts.run import ToolReply
from agentrt.core.outbound import Policy
from agentrt.store.a2a.tasks import A2AStore
from agentrt.store.runs.record import RunStore
from tests.activities._remote import CALLER, TOKEN, Sides, sides
from tests.workers._proc import WorkerProcess
from tests.workers.conftest import pool
from tests.workflows._replay import assert_replays, fetch, scheduled
from tests.workflows._waiting import until, until_status

__all__ = ["pool", "sides"]


pytestmark = pytest.mark.timeout(120)

ASK = "Please get a quote in another currency"


async def _asked(sides: Sides) -> tuple[WorkerProcess, str]:
    """A caller worker with the remote up, and a run of it waiting for the remote's question."""
    worker = sides.caller(await sides.remote.digest())

    async def up() -> bool:
        return "remote agent partner is up" in worker.log.read_text(errors="replace")

    await until(up, f"the caller's remote agent up:\n{worker.log_tail()}", within=60)
    run_id = await sides.runtime.start("delegator-auto", ASK)
    await until_status(sides.runtime, run_id, RunStatus.WAITING_FOR_INPUT, within=60)
    return worker, run_id


async def test_a_remote_question_pauses_the_run_and_the_answer_continues_the_call(
    sides: Sides, runs: RunStore, client: Client
) -> None:
    _, run_id = await _asked(sides)
    events = await sides.runtime.events(run_id)
    (asked,) = [e for e in events if e.kind.value == "input_requested"]
    assert asked.payload["question"] == "Which currency, EUR or USD?", asked.payload
    assert asked.payload["tool"] == "partner.quoter", asked.payload
    assert not [e for e in events if e.kind.value == "tool"]  # the call is not over
    assert sides.remote.tasks() == 1
    await sides.runtime.submit_input(run_id, message_id="op-1", text="EUR", sent_by="olga")
    done = await sides.runtime.result(run_id)
    assert done.status is RunStatus.COMPLETED, done
    assert done.answer == "The partner quoted in another currency."
    events = await sides.runtime.events(run_id)
    (tool,) = [e for e in events if e.kind.value == "tool"]
    assert "4599" in str(tool.payload) and not tool.payload.get("is_error"), tool.payload
    (given,) = [e for e in events if e.kind.value == "input"]
    assert given.payload["call_id"] == asked.payload["call_id"], given.payload
    assert sides.remote.tasks() == 1  # the answer went to the same task
    transcript = runs.transcript(run_id)
    assert not [m for m in transcript if m.role == "user" and m.content == "EUR"], transcript
    await assert_replays(await fetch(client, run_id), what="a write that asked for input")


async def test_an_answer_sent_again_is_the_same_message(sides: Sides) -> None:
    """The continuation's messageId is derived from the key and the turn: sent again (as
    after an unknown outcome), agentrt's server answers with the task as it is; the probe
    finds the task by the call's contextId and its result."""
    agent = RemoteAgent(name="partner", url=sides.remote.url,
                        pinned_card_digest=await sides.remote.digest())  # fmt: skip
    conn = RemoteConnection(agent, TOKEN, Policy.parse("127.0.0.0/8", ""))
    try:
        (tool,) = remote_tools(conn, await conn.card())
        key = f"k-{uuid.uuid4()}"
        args = {"message": "quote in another currency for order 1042"}
        first = ToolContext(run_id="r-1", call_id="c-1", idempotency_key=key)
        with pytest.raises(ToolNeedsInput) as asked:
            await tool(args, first)
        assert asked.value.question == "Which currency, EUR or USD?" and asked.value.turn == 0
        # The probe of a call waiting for an answer: send the turn again (the same message).
        assert (await tool.reconcile(args, first)).verdict == "not_applied"
        reply = ToolReply(turn=1, task_id=asked.value.task_id, text="EUR")
        answered = ToolContext(run_id="r-1", call_id="c-1", idempotency_key=key, reply=reply)
        result = await tool(args, answered)
        assert "4599" in result
        assert await tool(args, answered) == result  # the same message: the task as it is
        assert message_id(key, 1) != message_id(key) == message_id(key, 0)
        found = await tool.reconcile(args, answered)
        assert found.verdict == "applied" and found.result == result
        assert sides.remote.tasks() == 1
    finally:
        await conn.close()


async def test_a_run_cancelled_while_the_remote_waits_cancels_the_remote_task(
    sides: Sides, client: Client
) -> None:
    """The run that asked is cancelled while the remote waits for its answer: the remote
    task is cancelled too (`write.withdraw`, CancelTask), not left waiting for ever."""
    worker, run_id = await _asked(sides)
    store = A2AStore(sides.remote.parts.ctx)
    (task,) = store.page(owner=CALLER).tasks
    assert task.state == "TASK_STATE_INPUT_REQUIRED"
    await sides.runtime.cancel(run_id, by="olga")
    done = await sides.runtime.result(run_id)
    assert done.status is RunStatus.CANCELLED, done

    async def remote_cancelled() -> bool:
        found = store.get(task.id, CALLER)
        return found is not None and found.state == "TASK_STATE_CANCELED"

    try:
        await until(remote_cancelled, "the remote task cancelled", within=60)
    except AssertionError as exc:
        remote_log = sides.remote.log.read_text(errors="replace")[-6000:]
        caller_log = worker.log_tail()
        raise AssertionError(f"{exc}\ncaller:\n{caller_log}\nremote:\n{remote_log}") from None
    history = await fetch(client, run_id)
    assert ACT_WRITE_WITHDRAW in scheduled(history)
    await assert_replays(history, what="a run cancelled while a write waits for input")
