"""How an approval policy's ask shows where a decider reads a waiting run (issue 44, item
3): the run view of `GET /runs/{id}` and the inbox (`run_out` over the pending context
read from the run's events) names the policy, how many people the turn needs and who
approved it so far; `agentrt events` names the policy as the decider."""

from pathlib import Path

from temporalio.client import Client

from agentrt import Settings
from agentrt.api.operator.views import run_out
from agentrt.contracts.enums import EventKind, RunStatus
from agentrt.starter.render.events import event_text
from agentrt.store.runs.pending_context import pending_contexts
from tests.workflows._policy import refunder, serving
from tests.workflows._waiting import pending_digest, until_status


async def test_a_waiting_run_shows_the_policy_its_people_and_who_approved_so_far(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    async with serving(client, settings, tmp_path, [refunder("pol-view")]) as s:
        waiting = await s.refund("pol-view", "large", RunStatus.WAITING_FOR_APPROVAL)
        run_id, digest = waiting.run_id, pending_digest(waiting)
        await s.runtime.approve(run_id, approved=True, decided_by="bob", turn_digest=digest)

        view = await s.runtime.status(run_id)
        assert view.status is RunStatus.WAITING_FOR_APPROVAL and view.pending_approval
        contexts = pending_contexts(s.resources.ctx, {run_id: view.pending_approval.round})
        pending = run_out(view, "full", contexts[run_id]).pending_approval
        assert pending is not None
        assert pending.policy == "policy refunds@3"
        assert (pending.approvals_needed, pending.approved_by) == (2, ["bob"])

        await s.runtime.approve(run_id, approved=True, decided_by="carol", turn_digest=digest)
        await until_status(s.runtime, run_id, RunStatus.COMPLETED)
        shown = "\n".join(event_text(e).plain for e in s.runs.events(run_id, -1))
        assert "policy refunds@3 asks: 2 approver(s)" in shown
        assert "approved by bob (partial: the run still waits)" in shown
        assert "approved by carol" in shown

        small = await s.refund("pol-view", "small", RunStatus.COMPLETED)
        [approval] = [e for e in s.runs.events(small.run_id, -1) if e.kind is EventKind.APPROVAL]
        assert "approved by policy refunds@3: " in event_text(approval).plain
