"""A run waiting for an operator's answer on its refund (`on_unknown_outcome: ask`): the
shared set-up of the answer tests (tests/api/test_reconcile_answers.py, the page's,
tests/security/test_reconcile_access.py). The refund is claimed, then the worker's fault
hook raises before the effect and the probe's target stays down: its outcome is unknown."""

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, NamedTuple

import httpx

from agentrt.contracts.enums import RunStatus
from agentrt.contracts.views import EventView
from tests.api.conftest import Live
from tests.api.ops_helpers import REFUND, http, name, start, token, wait_status
from tests.conftest import UnknownOutcome

MakeLive = Callable[[Callable[[str], None]], AbstractAsyncContextManager[Live]]
OPS = ("runs:start", "runs:read", "runs:reconcile")
# The probe is tried five times first (about 8 s), then the run waits.
ASKED_WITHIN = 60.0


@asynccontextmanager
async def awaiting(
    make_live: MakeLive, profile: str = "asker"
) -> AsyncIterator[tuple[Live, httpx.AsyncClient, str, dict[str, Any]]]:
    """A run of `profile` waiting for an answer on its refund: (live, an operator's client,
    the run id, the run as the API shows it)."""
    async with make_live(UnknownOutcome()) as live:
        secret = token(live, name("ops"), *OPS)
        async with http(live, secret) as client:
            run_id = (await start(client, profile, REFUND))["run_id"]
            run = await wait_status(
                client, run_id, RunStatus.AWAITING_RECONCILIATION.value, seconds=ASKED_WITHIN
            )
            yield live, client, run_id, run


def answer_of(run: dict[str, Any], answer: str, **more: Any) -> dict[str, Any]:
    """The body of an answer on the run's pending write."""
    write = run["pending_write"]
    return {"call_id": write["call_id"], "fence": write["fence"], "answer": answer, **more}


async def answered(
    client: httpx.AsyncClient, run_id: str, body: dict[str, Any], *statuses: str
) -> dict[str, Any]:
    """Post the answer (it must be taken), then the run once it reached one of `statuses`."""
    reply = await client.post(f"/runs/{run_id}/reconcile", json=body)
    assert reply.status_code == 200, reply.text
    return await wait_status(client, run_id, *statuses, seconds=30)


class Answered(NamedTuple):
    live: Live
    run_id: str
    run: dict[str, Any]  # as the API shows it once it reached one of the statuses asked
    events: list[EventView]


async def answer_taken(make_live: MakeLive, answer: str, *statuses: str, **more: Any) -> Answered:
    """A run of `awaiting`, answered `answer` (with `more`) over HTTP, once it reached one
    of `statuses`, and its events."""
    async with awaiting(make_live) as (live, client, run_id, run):
        ended = await answered(client, run_id, answer_of(run, answer, **more), *statuses)
        return Answered(live, run_id, ended, await live.runtime.events(run_id))
