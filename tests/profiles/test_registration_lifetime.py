"""A worker's profile registration lives as long as the worker: written at its start,
stamped while it runs, withdrawn when it closes, and no longer routing once a worker that
died without closing has been silent for STALE_AFTER. Two workers serving two copies of a
profile: the one registered last routes, and the other again when it goes."""

import uuid
from datetime import timedelta

from sqlalchemy import select, update

from agentrt import Settings
from agentrt.contracts.profiles import Profile
from agentrt.contracts.registered import RegisteredProfile
from agentrt.store.db.context import as_utc
from agentrt.store.ops.registry import (
    STALE_AFTER,
    ProfileRegistry,
    Registration,
    ServerRow,
)
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import build


def _profile(**update: object) -> Profile:
    return Profile(name=f"life-{uuid.uuid4().hex[:8]}", model="scripted:b").model_copy(
        update=update
    )


def _age(registry: ProfileRegistry, runs: RunStore, worker: str, by: timedelta) -> None:
    """As if the worker had last stamped its rows `by` ago (a SIGKILLed worker's rows)."""
    with runs.ctx.transaction() as conn:
        rows = conn.execute(
            select(ServerRow.name, ServerRow.seen_at).where(ServerRow.worker == worker)
        ).all()
        for name, seen in rows:
            conn.execute(
                update(ServerRow)
                .where(ServerRow.worker == worker, ServerRow.name == name)
                .values(seen_at=as_utc(seen) - by)
            )


def test_a_closed_workers_profiles_stop_routing_and_the_change_is_dated(runs: RunStore) -> None:
    registry = ProfileRegistry(runs.ctx)
    profile = _profile()
    held = Registration(registry, [profile])
    assert registry.get(profile.name) == RegisteredProfile.of(profile)
    assert profile.name in registry.all()
    before = registry.changed_at()
    held.close()
    assert registry.get(profile.name) is None and profile.name not in registry.all()
    after = registry.changed_at()
    assert before is not None and after is not None and after >= before
    held.close()  # once
    assert registry.heartbeat(held.worker) is False  # withdrawn: nothing left to stamp


def test_a_silent_worker_stops_routing_after_stale_after_and_a_stamp_brings_it_back(
    runs: RunStore,
) -> None:
    registry = ProfileRegistry(runs.ctx)
    profile = _profile()
    worker = registry.register([profile])
    try:
        _age(registry, runs, worker, STALE_AFTER - timedelta(seconds=5))
        assert registry.get(profile.name) is not None  # late, not yet stale
        _age(registry, runs, worker, timedelta(seconds=10))
        assert registry.get(profile.name) is None  # died without a word
        assert registry.heartbeat(worker) is True  # it was only cut off: back again
        assert registry.get(profile.name) == RegisteredProfile.of(profile)
    finally:
        registry.withdraw(worker)


def test_two_copies_the_last_registered_routes_and_the_other_when_it_goes(
    runs: RunStore,
) -> None:
    registry = ProfileRegistry(runs.ctx)
    old = _profile(task_queue="old-q")
    new = old.model_copy(update={"task_queue": "new-q"})
    first = registry.register([old])
    second = registry.register([new])
    try:
        assert registry.get(old.name) == RegisteredProfile.of(new)
        assert registry.all()[old.name] == RegisteredProfile.of(new)
        registry.withdraw(second)  # the new build rolled back: the old copy routes again
        assert registry.get(old.name) == RegisteredProfile.of(old)
    finally:
        registry.withdraw(first)
    assert registry.get(old.name) is None


def test_built_resources_register_their_profiles_and_closing_withdraws_them(
    settings: Settings, runs: RunStore
) -> None:
    mine = _profile()
    resources = build(settings, profiles=[mine])
    with resources:
        # No tools: its runs only read (the MCP server's annotations, api/mcp/tools.py).
        expected = RegisteredProfile.of(mine, [], "read_only")
        assert ProfileRegistry(runs.ctx).get(mine.name) == expected
    # The next test sharing this database does not see this worker's profile.
    assert ProfileRegistry(runs.ctx).get(mine.name) is None
