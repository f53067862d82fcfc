"""Issue 43 item 3, for remote calls: a remote agent's skill declares the worst case of one
call (`reserve`), as the remote's own spend is not reported to the caller. A budgeted run
reserves it from its room before the call is sent, and counts it spent after; a call whose
worst case does not fit is refused, nothing sent, and the run goes on. Against agentrt's
own A2A server in another process, the caller's worker in a process of its own."""

import pytest
from temporalio.client import Client

from agentrt.contracts.enums import RunStatus
from tests.activities._remote import Sides, sides
from tests.workers.conftest import pool
from tests.workflows._replay import assert_replays, fetch
from tests.workflows._waiting import until

__all__ = ["pool", "sides"]


pytestmark = pytest.mark.timeout(120)

CEILING = 3000  # the profile delegator-budget's max_tokens


async def _up(sides: Sides, reserve: int) -> None:
    worker = sides.caller(await sides.remote.digest(), reserve=reserve)

    async def up() -> bool:
        return "remote agent partner is up" in worker.log.read_text(errors="replace")

    await until(up, f"the caller's remote agent up:\n{worker.log_tail()}", within=60)


async def test_a_remote_call_reserves_its_declared_worst_case(sides: Sides, client: Client) -> None:
    await _up(sides, reserve=500)
    run_id = await sides.runtime.start("delegator-budget", "Please get a quote")
    done = await sides.runtime.result(run_id)
    assert done.status is RunStatus.COMPLETED, done
    assert done.answer == "The partner quoted order 1042."
    spent = done.prompt_tokens + done.completion_tokens
    assert 500 < spent <= CEILING, done  # the remote call counted as its worst case
    assert sides.remote.tasks() == 1
    await assert_replays(await fetch(client, run_id), what="a reserving remote call")


async def test_a_remote_call_that_does_not_fit_is_refused_unsent(
    sides: Sides, client: Client
) -> None:
    await _up(sides, reserve=CEILING * 10)
    run_id = await sides.runtime.start("delegator-budget", "Please get a quote")
    done = await sides.runtime.result(run_id)
    assert done.status is RunStatus.COMPLETED, done  # the call refused, not the run
    (tool,) = [e for e in await sides.runtime.events(run_id) if e.kind.value == "tool"]
    assert "no room left" in str(tool.payload) and tool.payload.get("is_error"), tool.payload
    assert done.prompt_tokens + done.completion_tokens <= CEILING, done
    assert sides.remote.tasks() == 0  # nothing sent
    await assert_replays(await fetch(client, run_id), what="a remote call refused for room")
