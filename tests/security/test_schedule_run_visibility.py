"""Who sees a schedule's runs (contracts/schedules.py `sees`, store/runs/query.py `seen_by`):
a fire's run names `schedule:<name> by <creator>` as its initiator, so a creator holding
runs:read (its own runs only) sees its schedules' runs, in the list and one by one, and
another principal with runs:read sees none of them (404 alike). Against a live server,
its worker, the real dev server and database."""

from temporalio.client import Client

from agentrt.contracts.schedules import initiator_of, sees
from tests.api.conftest import Live
from tests.api.ops_helpers import http, name, token, wait_status
from tests.api.test_schedules import body, first_run
from tests.starter._schedules import schedule_name

OWN_RUNS = ("schedules:manage", "runs:start", "runs:read")


def test_the_rule_for_one_run() -> None:
    fire = initiator_of("nightly", "alice")
    assert sees("alice", fire) and sees(None, fire) and sees("alice", "alice")
    assert not sees("bob", fire) and not sees("ice", fire) and not sees("bob", "alice")
    # Not a schedule's initiator, though it ends the same way.
    assert not sees("alice", "mallory by alice") and not sees("alice", "schedule:a b by alice")


async def test_a_creator_with_runs_read_sees_its_schedules_runs_and_no_one_else_does(
    live: Live, client: Client
) -> None:
    creator, other = name("maker"), name("other")
    schedule = schedule_name("seen")
    async with (
        http(live, token(live, creator, *OWN_RUNS)) as api,
        http(live, token(live, other, *OWN_RUNS)) as stranger,
    ):
        reply = await api.post("/schedules", json=body(schedule, paused=True))
        assert reply.status_code == 201, reply.text
        try:
            assert (await api.post(f"/schedules/{schedule}/trigger")).status_code == 202
            run_id = await first_run(api, schedule)
            run = await wait_status(api, run_id, "COMPLETED", seconds=60)
            assert run["initiator"] == f"schedule:{schedule} by {creator}"
            listed = (await api.get("/runs", params={"limit": 200})).json()["runs"]
            assert run_id in [r["run_id"] for r in listed]
            assert (await stranger.get(f"/runs/{run_id}")).status_code == 404
            theirs = (await stranger.get("/runs", params={"limit": 200})).json()["runs"]
            assert run_id not in [r["run_id"] for r in theirs]
        finally:
            assert (await api.delete(f"/schedules/{schedule}")).status_code == 204
