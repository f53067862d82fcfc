"""agentrt consumes its own MCP server: a run of one worker calls, through an MCP toolbox
pointing at the API's /mcp, a published profile served by another worker. A run calling a
run, fenced on both sides:

- the outer run sees the tool's annotations (a non-idempotent write), so its call waits
  for approval and goes through the write fence, once;
- the call carries the fence's idempotency key in `_meta`, from which the MCP server
  derives the inner run's id; the inner run starts as the token's principal and waits
  for its own approval, which its outer caller is told (a status, not an error);
- once an operator approves the inner run, it completes with its answer."""

import uuid
from pathlib import Path

from temporalio.client import Client

from agentrt import AgentRuntime, Profile, RunStatus, build_worker
from agentrt.activities.providers.scripted import ScriptedProvider
from agentrt.activities.toolbox.mcp_config import McpServer
from agentrt.api.mcp.calls import derived_run_id
from agentrt.contracts.ids import idempotency_key
from agentrt.store.ops.registry import ProfileRegistry
from agentrt.store.runs.record import RunStore
from tests._rules import new_queue, one_call
from tests.api.conftest import Live
from tests.api.ops_helpers import DECIDER, REFUND, http, name, token, wait_status
from tests.workflows._waiting import until


async def test_a_run_calls_a_published_profile_through_the_mcp_server(
    client: Client, live: Live, tmp_path: Path
) -> None:
    caller = name("mcp-self")
    secret = token(live, caller, *DECIDER, profiles=["helper"])
    queue = new_queue()
    orchestrator = Profile(
        name=f"orchestrator-{uuid.uuid4().hex[:8]}",
        model="scripted:demo",
        tools=[McpServer(name="self", url=live.url + "/mcp",
                         headers={"Authorization": f"Bearer {secret}"})],
        approval="writes",
        task_queue=queue,
    )  # fmt: skip
    rules = one_call("delegate", "self.helper", {"prompt": REFUND}, "Delegated.", "No.")
    s = live.settings.replace(
        temporal={"task_queue": queue},
        worker={"profiles_file": tmp_path / "absent-profiles.yaml"},  # never read
    )
    worker, resources = build_worker(
        client, s, providers={"scripted": ScriptedProvider(rules)}, profiles=[orchestrator]
    )
    with resources:
        async with worker:
            runtime = AgentRuntime(client, RunStore(resources.ctx), queue)
            registry = ProfileRegistry(resources.ctx)

            async def registered_as_a_write() -> bool:
                # At the start the `self` server had not listed its tools; once it has,
                # the orchestrator registers what they do (helper: a non-idempotent write).
                found = registry.get(orchestrator.name)
                return found is not None and found.reach == "writes"

            await until(registered_as_a_write, "the orchestrator's reach")
            outer = await runtime.run(orchestrator.name, "please delegate", initiator="ops")
            # The MCP tool is a non-idempotent write (its annotations): the outer run waits.
            assert outer.status is RunStatus.WAITING_FOR_APPROVAL
            assert outer.pending_approval is not None
            [call] = outer.pending_approval.calls
            assert call.name == "self.helper"
            await runtime.approve(
                outer.run_id, approved=True, decided_by="ops-lead",
                turn_digest=outer.pending_approval.turn_digest,
            )  # fmt: skip
            done = await runtime.result(outer.run_id)
            assert done.status is RunStatus.COMPLETED and done.answer == "Delegated."
            events = await runtime.events(outer.run_id, after_position=-1)
    told = " ".join(str(e.payload) for e in events if e.kind.value == "tool")
    # The inner run: started as the token's principal, waiting for its own approval.
    async with http(live, secret) as api:
        [inner] = (await api.get("/runs")).json()["runs"]
        assert (inner["profile"], inner["initiator"]) == ("helper", caller)
        assert inner["run_id"] in told and "WAITING_FOR_APPROVAL" in told
        # Its id is the fence's key's: a retried outer call could name no second run.
        key = f"key:{idempotency_key(outer.run_id, call.call_id)}"
        assert inner["run_id"] == str(derived_run_id(caller, "helper", key))
        waiting = await wait_status(api, inner["run_id"], "WAITING_FOR_APPROVAL")
        digest = waiting["pending_approval"]["turn_digest"]
        ok = await api.post(
            f"/runs/{inner['run_id']}/decision", json={"verdict": "approve", "turn_digest": digest}
        )
        assert ok.status_code == 200, ok.text
        finished = await wait_status(api, inner["run_id"], "COMPLETED")
    assert finished["answer"] == "Done: order 1042 was refunded in full."
