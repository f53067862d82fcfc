"""A schedule's prompt under payload keys (issue 44): the Schedule's action, each fire's
history and the run the fire starts hold it encrypted only, and the run's payloads are
bound to the run, not to the fire that started it (workers/runner.py gives the fire the
plain sandbox, so its child's input is encoded in the child's context)."""

import uuid

from agentrt.contracts.enums import RunStatus
from agentrt.starter.scheduling import RunSchedules
from tests._cipher import assert_ciphertext_history
from tests.security.test_payload_binding import Keyed, keyed  # noqa: F401
from tests.starter._schedules import LOOKUP, fire_ids, fired, run_ended, schedule_name
from tests.starter.test_scheduling import request


async def test_a_fired_run_under_payload_keys_is_sealed_and_bound_to_itself(
    keyed: Keyed,  # noqa: F811
) -> None:
    canary = f"canary-{uuid.uuid4().hex[:8]}"
    schedules = RunSchedules(keyed.runtime)
    name = schedule_name("keyed")
    await schedules.create(
        request(name, prompt=f"{LOOKUP} {canary}", paused=True), created_by="alice"
    )
    try:
        await schedules.trigger(name)
        [run_id] = await fired(schedules.get, name, 1)
        run = await run_ended(keyed.runtime, run_id)
        assert run.status is RunStatus.COMPLETED
        assert await assert_ciphertext_history(keyed.plain, run_id, canary, bound=True) >= 5
        [fire_id] = await fire_ids(keyed.plain, name)
        await keyed.client.get_workflow_handle(fire_id).result()  # ended: its history whole
        await assert_ciphertext_history(keyed.plain, fire_id, canary)
    finally:
        await schedules.delete(name)
