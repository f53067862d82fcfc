"""A profile written in Python runs an agent end to end with no YAML file: no profiles
file, no rules file. The worker registers it, and the client routes the run by that
registration to the profile's own queue (its default queue has no worker)."""

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from agentrt import AgentRuntime, Profile, RunStatus, Settings, UnknownProfileError, build_worker
from agentrt.activities.providers.scripted import ScriptedProvider
from agentrt.contracts.registered import RegisteredProfile
from agentrt.store.ops.registry import ProfileRegistry
from agentrt.store.runs.record import RunStore
from tests._rules import one_call, scripted_profile
from tests.workers import _user_toolbox
from tests.workflows._waiting import until

# The scripted model, written in Python too.
RULES = one_call(
    "book",
    "book_entry",
    {"account": "acme", "amount_cents": 700},
    "Booked.",
    "I only book entries.",
)


async def test_a_profile_written_in_python_runs_an_agent_end_to_end_with_no_yaml_file(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    queue = f"tq-{uuid.uuid4().hex[:10]}"
    # Its own queue: the client learns it from the registration.
    profile = scripted_profile("bookkeeper", "You keep the books.", "ledger", queue)
    s = settings.replace(
        temporal={"task_queue": queue},
        worker={"profiles_file": tmp_path / "absent-profiles.yaml"},  # never read
        providers={"rules_file": tmp_path / "absent-rules.yaml"},  # never read
    )
    worker, resources = build_worker(
        client,
        s,
        toolboxes=[_user_toolbox.toolbox],
        providers={"scripted": ScriptedProvider(RULES)},
        profiles=[profile],
    )
    # Neither file exists: reading either would have been a ConfigError.
    with resources:
        registry = ProfileRegistry(resources.ctx)
        assert registry.get(profile.name) is None  # the plugin holds nothing until it runs
        async with worker:

            async def registered() -> bool:  # the worker's run registers it, then polls
                return registry.get(profile.name) is not None

            await until(registered, "the profile registered")
            # No payload keys; its toolbox books entries, a non-idempotent write.
            expected = RegisteredProfile.of(profile, payload_keys=[], reach="writes")
            assert registry.get(profile.name) == expected
            # The client's own queue has no worker: the run goes where the worker said.
            runtime = AgentRuntime(client, RunStore(resources.ctx), "nobody-polls-this")
            assert await runtime.task_queue_of(profile.name) == queue
            done = await runtime.run(profile.name, "Please book the invoice", initiator="al")
    assert done.status is RunStatus.COMPLETED and done.answer == "Booked."
    [booked] = [b for b in _user_toolbox.BOOKED if b["run_id"] == done.run_id]
    assert (booked["account"], booked["amount_cents"]) == ("acme", 700)


async def test_a_client_that_must_refuse_plaintext_refuses_a_profile_no_worker_registered(
    client: Client, runs: RunStore
) -> None:
    """Its privacy is unknown, so it might keep less than everything: refused before
    anything is sent, as a profile below `full` is."""
    runtime = AgentRuntime(client, runs, f"tq-{uuid.uuid4().hex[:8]}", plaintext_refused=True)
    run_id = str(uuid.uuid4())
    with pytest.raises(UnknownProfileError, match="'never-registered': no worker has registered"):
        await runtime.start("never-registered", "hello", run_id=run_id)
    with pytest.raises(RPCError) as missing:
        await client.get_workflow_handle(run_id).describe()
    assert missing.value.status == RPCStatusCode.NOT_FOUND
    assert runs.get(run_id) is None


def test_a_worker_registering_the_same_profile_changes_nothing_a_changed_one_replaces_it(
    runs: RunStore,
) -> None:
    registry = ProfileRegistry(runs.ctx)
    profile = Profile(name=f"reg-{uuid.uuid4().hex[:8]}", model="a:b", privacy="metadata")
    registry.register([profile])
    first = registry.changed_at()
    assert first is not None and registry.get(profile.name) == RegisteredProfile.of(profile)
    registry.register([profile])
    assert registry.changed_at() == first
    # Not published: the suite's Agent Card lists exactly the A2A fixtures' skills.
    moved = profile.model_copy(update={"task_queue": "elsewhere", "privacy": "full"})
    registry.register([moved])
    got = registry.get(profile.name)
    assert got is not None and (got.task_queue, got.privacy) == ("elsewhere", "full")
    assert got.digest != RegisteredProfile.of(profile).digest
    assert profile.name in registry.all()
    assert registry.get("no-such-profile") is None


def test_workers_starting_together_register_the_same_new_profile_without_a_clash(
    runs: RunStore,
) -> None:
    registry = ProfileRegistry(runs.ctx)
    profile = Profile(name=f"fleet-{uuid.uuid4().hex[:8]}", model="a:b")
    together = threading.Barrier(4)

    def register() -> None:
        together.wait()
        registry.register([profile])

    with ThreadPoolExecutor(4) as pool:
        for done in [pool.submit(register) for _ in range(4)]:
            done.result()  # none failed on the other's insert
    assert registry.get(profile.name) == RegisteredProfile.of(profile)
