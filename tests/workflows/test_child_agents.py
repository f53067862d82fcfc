"""Child agents (issue 43 item 1, workflows/children.py): a profile's `agents` are tools to
its model, and a call runs the child as a Temporal child workflow. Seen at the real
boundary: a worker in this process, the real Temporal dev server and database, the
scripted model and the demo toolbox: the child's own approval and four-eyes, the parent's
approval rules on the delegation, a failed child, the depth and fan-out bounds, a cancel,
and a reset parent that finds its first child. SIGKILL mid-delegation:
tests/fence/test_child_kill.py; the load checks: tests/profiles/test_child_agents_load.py;
the views: tests/api/test_child_views.py; a forged parent: tests/security/test_forged_parent.py."""

import asyncio
import base64
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from temporalio.api.common.v1 import WorkflowExecution
from temporalio.api.enums.v1 import EventType
from temporalio.api.workflowservice.v1 import ResetWorkflowExecutionRequest
from temporalio.client import Client

from agentrt import Settings
from agentrt.contracts.agents import child_run_id
from agentrt.contracts.enums import EventKind, RunStatus, ToolEffect
from agentrt.contracts.errors import ErrorType, SelfApprovalError
from agentrt.contracts.ids import ACT_CHILD_AWAIT
from agentrt.core.codec import bound_run
from agentrt.core.temporal import data_converter
from agentrt.store.demo import DemoWorld
from tests.workflows._replay import assert_replays, fetch, scheduled
from tests.workflows._team import (
    TYPED,
    child_rule,
    delegating,
    name,
    profile,
    refund_team,
    team,
    tool_events,
)
from tests.workflows._waiting import decide, until_status


async def test_a_child_write_approved_in_the_child_answers_the_parent_call(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    """The parent (no approvals) delegates to a child whose refund needs approval: the
    child pauses on its own, is approved, writes once, and its answer is the parent's tool
    result. The delegation's effect is the child's strongest (a non-idempotent write), the
    child's events and row name the parent, the parent's view lists the child, and the
    parent's history holds one child workflow and replays."""
    parent, profiles, rules = refund_team(approval="writes")
    async with team(client, settings, tmp_path, profiles, rules) as t:
        run_id = await t.runtime.start(parent, "team refund please")
        kid = child_run_id(run_id, "r1.1")
        waiting = await until_status(t.runtime, kid, RunStatus.WAITING_FOR_APPROVAL)
        assert waiting.parent_run_id == run_id
        assert waiting.pending_approval is not None
        await decide(t.runtime, waiting, approved=True)
        view = await t.runtime.result(run_id)
        assert view.status is RunStatus.COMPLETED, view
        assert view.children == [kid]
        child_view = await t.runtime.result(kid)
        assert child_view.status is RunStatus.COMPLETED
        [delegation] = tool_events(t, run_id)
        assert delegation.payload["result"] == "Refunded 1042 (child)."
        assert delegation.payload["is_error"] is False
        assert delegation.payload["child_run_id"] == kid
        assert delegation.payload["effect"] == ToolEffect.NON_IDEMPOTENT_WRITE.value
        started = t.runs.events(kid)[0]
        assert started.kind is EventKind.RUN_STARTED
        assert started.payload["parent_run_id"] == run_id
        refunds = [e for e in tool_events(t, kid) if e.payload["tool"] == "issue_refund"]
        assert len(refunds) == 1 and refunds[0].payload["is_error"] is False
        history = await fetch(client, run_id)
        assert _child_starts(history.events) == 1
        await assert_replays(history)


def _child_starts(events: Any) -> int:
    kind = EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED
    return sum(1 for e in events if e.event_type == kind)


async def test_the_parent_approval_rules_apply_to_a_delegation_that_writes(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    """A parent with `approval: writes` pauses before the delegation to a child that can
    write (its effect NON_IDEMPOTENT_WRITE), and starts no child before the decision; a
    child that only reads is a read (no pause)."""
    parent, writer, reader = name("team"), name("writer"), name("reader")
    profiles = [
        profile(parent, agents=[writer, reader]),
        profile(writer, tools=["issue_refund"]),
        profile(reader, tools=["lookup_order"], approval="none"),
    ]
    rules = [
        delegating("ask writer", (writer, "writer job")),
        delegating("ask reader", (reader, "reader job"), answer="Read."),
        child_rule("reader job", answer="Order 1042 is shipped."),
    ]
    async with team(client, settings, tmp_path, profiles, rules) as t:
        run_id = await t.runtime.start(parent, "ask writer")
        view = await until_status(t.runtime, run_id, RunStatus.WAITING_FOR_APPROVAL)
        assert view.call_effects == {"r1.1": ToolEffect.NON_IDEMPOTENT_WRITE.value}
        assert (await t.runtime.status(run_id)).children == []
        await t.runtime.cancel(run_id, by="bob")
        read_id = await t.runtime.start(parent, "ask reader")
        read = await t.runtime.result(read_id)
        assert read.status is RunStatus.COMPLETED
        [call] = tool_events(t, read_id)
        assert call.payload["effect"] == ToolEffect.READ_ONLY.value
        assert call.payload["result"] == "Order 1042 is shipped."


async def test_a_failed_child_fails_the_call_not_the_parent_and_a_typed_one_answers_json(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    """Two children in one turn: one whose answer breaks its output schema (the child run
    FAILS invalid_output) and one with a valid typed answer. The parent completes; the
    failed call is an error result typed ChildFailed, the typed one is the child's JSON."""
    parent, bad, good = name("team"), name("bad"), name("good")
    profiles = [
        profile(parent, agents=[bad, good], approval="none"),
        profile(bad, output_schema=TYPED, output_retries=0),
        profile(good, output_schema=TYPED),
    ]
    rules = [
        delegating("two jobs", (bad, "bad job"), (good, "good job")),
        child_rule("bad job", answer="not json at all"),
        child_rule("good job", answer='{{"n": 3}}'),  # braces doubled: {...} is a placeholder
    ]
    async with team(client, settings, tmp_path, profiles, rules) as t:
        run_id = await t.runtime.start(parent, "two jobs")
        view = await t.runtime.result(run_id)
        assert view.status is RunStatus.COMPLETED, view
        failed, typed = tool_events(t, run_id)
        assert failed.payload["is_error"] is True
        assert failed.payload["error_type"] == ErrorType.CHILD_FAILED.value
        assert "did not answer" in failed.payload["result"]
        assert (await t.runtime.result(failed.payload["child_run_id"])).status is RunStatus.FAILED
        assert typed.payload["is_error"] is False
        assert json.loads(typed.payload["result"]) == {"n": 3}


async def test_depth_and_fan_out_bounds_refuse_the_call_with_a_typed_error(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    """With AGENTRT_MAX_AGENT_DEPTH=1 and AGENTRT_MAX_CHILDREN_PER_RUN=1: the parent's
    second child in one turn is refused (ChildFanOutExceeded), and the child's own
    delegation (depth 2) is refused (ChildDepthExceeded); no run starts for either, and
    both runs complete."""
    top, mid, leaf = name("top"), name("mid"), name("leaf")
    profiles = [
        profile(top, agents=[mid], approval="none"),
        profile(mid, agents=[leaf], approval="none"),
        profile(leaf),
    ]
    rules = [
        delegating("fan twice", (mid, "mid job one"), (mid, "mid job two")),
        delegating("mid job", (leaf, "leaf job"), answer="Mid done."),
    ]
    limits = {"max_agent_depth": 1, "max_children_per_run": 1}
    async with team(client, settings, tmp_path, profiles, rules, **limits) as t:
        run_id = await t.runtime.start(top, "fan twice")
        view = await t.runtime.result(run_id)
        assert view.status is RunStatus.COMPLETED, view
        started, refused = tool_events(t, run_id)
        assert refused.payload["error_type"] == ErrorType.CHILD_FAN_OUT_EXCEEDED.value
        assert refused.payload["is_error"] is True
        assert view.children == [started.payload["child_run_id"]]
        mid_id = started.payload["child_run_id"]
        assert started.payload["result"] == "Mid done."
        [deep] = tool_events(t, mid_id)
        assert deep.payload["error_type"] == ErrorType.CHILD_DEPTH_EXCEEDED.value
        assert (await t.runtime.status(mid_id)).children == []
        assert t.runs.get(child_run_id(mid_id, "r1.1")) is None


async def test_a_cancel_of_the_parent_reaches_thechild_rule(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    """The parent waits on a child paused for approval; cancelling the parent cancels the
    child (no write), records the call's end, and settles the parent CANCELLED."""
    parent, profiles, rules = refund_team(approval="writes")
    async with team(client, settings, tmp_path, profiles, rules) as t:
        run_id = await t.runtime.start(parent, "team refund please")
        kid = child_run_id(run_id, "r1.1")
        await until_status(t.runtime, kid, RunStatus.WAITING_FOR_APPROVAL)
        await t.runtime.cancel(run_id, by="bob", reason="changed my mind")
        view = await until_status(t.runtime, run_id, RunStatus.CANCELLED, within=60)
        assert (await t.runtime.status(kid)).status is RunStatus.CANCELLED
        assert not [e for e in tool_events(t, kid) if e.payload.get("is_error") is False]
        [delegation] = tool_events(t, run_id)  # recorded before the parent settled
        assert delegation.payload["is_error"] is True
        assert delegation.payload["child_status"] == RunStatus.CANCELLED.value
        assert view.children == [kid]


async def test_a_parent_reset_before_the_delegation_awaits_its_firstchild_rule(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    """A reset of the parent to the workflow task that started the child re-runs the start:
    the child's id (derived from the parent's run and call) exists, so the start is refused
    (REJECT_DUPLICATE) and the parent awaits that child's end (`child.await`) instead of
    starting a second one. One child, one refund, the parent completed as before."""
    parent, profiles, rules = refund_team(approval="none")
    async with team(client, settings, tmp_path, profiles, rules) as t:
        run_id = await t.runtime.start(parent, "team refund please")
        view = await t.runtime.result(run_id)
        assert view.status is RunStatus.COMPLETED, view
        kid = child_run_id(run_id, "r1.1")
        handle = client.get_workflow_handle(run_id)
        first = await handle.fetch_history()
        [start] = [e for e in first.events if e.event_type == _STARTED]
        at = start.start_child_workflow_execution_initiated_event_attributes
        new_run = await _reset(client, run_id, at.workflow_task_completed_event_id)
        await handle_result(client, run_id, new_run)
        redone = await client.get_workflow_handle(run_id, run_id=new_run).fetch_history()
        refused = EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_FAILED
        assert [e.event_type for e in redone.events].count(refused) == 1
        assert ACT_CHILD_AWAIT in scheduled(redone)
        after = await t.runtime.status(run_id)
        assert after.status is RunStatus.COMPLETED and after.children == [kid]
        assert DemoWorld(t.runs.ctx).ledger_count(run_id=kid) == 1
        [delegation] = tool_events(t, run_id)
        assert delegation.payload["result"] == "Refunded 1042 (child)."


_STARTED = EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED


async def _reset(client: Client, workflow_id: str, event_id: int) -> str:
    resp = await client.workflow_service.reset_workflow_execution(
        ResetWorkflowExecutionRequest(
            namespace=client.namespace,
            workflow_execution=WorkflowExecution(workflow_id=workflow_id),
            reason="test: a parent reset to before its delegation",
            workflow_task_finish_event_id=event_id,
            request_id=str(uuid.uuid4()),
        )
    )
    return resp.run_id


async def handle_result(client: Client, workflow_id: str, run_id: str) -> None:
    await asyncio.wait_for(client.get_workflow_handle(workflow_id, run_id=run_id).result(), 60)


async def test_four_eyes_holds_across_the_boundary(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    """A four-eyes child started by a delegation has the parent's initiator: the person who
    started the parent cannot approve the child's write; another person can."""
    parent, profiles, rules = refund_team(approval="writes")
    profiles[1] = profiles[1].model_copy(update={"four_eyes": True})
    async with team(client, settings, tmp_path, profiles, rules) as t:
        run_id = await t.runtime.start(parent, "team refund please", initiator="alice")
        kid = child_run_id(run_id, "r1.1")
        waiting = await until_status(t.runtime, kid, RunStatus.WAITING_FOR_APPROVAL)
        assert waiting.initiator == "alice"
        with pytest.raises(SelfApprovalError):
            await decide(t.runtime, waiting, approved=True, by="alice")
        await decide(t.runtime, waiting, approved=True, by="bob")
        assert (await t.runtime.result(run_id)).status is RunStatus.COMPLETED
        assert DemoWorld(t.runs.ctx).ledger_count(run_id=kid) == 1


async def test_a_delegation_under_payload_keys_binds_the_childs_input_to_the_child(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    """With payload keys every payload is bound to its run (core/codec.py): the child's
    start input is encrypted for the child, not for the parent that wrote the command, so
    the child's worker reads it and the parent reads the child's result. The worker's
    runner answers the parent's other commands with the parent's own context
    (workers/runner.py) and asks the sandbox for the child's."""
    keys = "k1:" + base64.b64encode(b"k" * 32).decode()
    keyed = await Client.connect(
        client.service_client.config.target_host,
        namespace=client.namespace,
        data_converter=data_converter(keys),
    )
    parent, reader = name("team"), name("reader")
    profiles = [
        profile(parent, agents=[reader], approval="none"),
        profile(reader, tools=["lookup_order"], approval="none"),
    ]
    rules = [
        delegating("ask reader", (reader, "reader job"), answer="Read."),
        child_rule("reader job", answer="Order 1042 is shipped."),
    ]
    async with team(keyed, settings, tmp_path, profiles, rules) as t:
        run_id = await t.runtime.start(parent, "ask reader")
        view = await t.runtime.result(run_id)
        assert view.status is RunStatus.COMPLETED, view
        [call] = tool_events(t, run_id)
        assert call.payload["is_error"] is False, call.payload
        assert call.payload["result"] == "Order 1042 is shipped."
        kid = call.payload["child_run_id"]
        raw = await client.get_workflow_handle(kid).fetch_history()
        [started] = [
            e for e in raw.events if e.HasField("workflow_execution_started_event_attributes")
        ]
        [sealed] = started.workflow_execution_started_event_attributes.input.payloads
        assert bound_run(sealed) == kid  # encrypted, and for the child
