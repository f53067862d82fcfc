"""The operator API's routes. The decider and the cancel actor are the authenticated
principal; nothing in a body names who acts."""

import asyncio
import uuid
from collections.abc import Callable
from typing import Annotated

from fastapi import APIRouter, Depends, Header, Query, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from agentrt.api.operator import auth
from agentrt.api.operator.auth import Principal
from agentrt.api.operator.errors import (
    RESPONSES,
    bad_request,
    conflict,
    not_found,
)
from agentrt.api.operator.sse import follow, resume_after
from agentrt.api.operator.state import OpsState
from agentrt.api.operator.views import (
    CancelIn,
    EventPageOut,
    MeOut,
    RunOut,
    RunPageOut,
    event_out,
)
from agentrt.api.wake import MAX_SEQUENCE
from agentrt.contracts.budget import BudgetState
from agentrt.contracts.enums import RunStatus
from agentrt.contracts.views import RunView
from agentrt.starter._starting_view import starting_runs
from agentrt.store.runs.query import BadCursorError

router = APIRouter(responses=RESPONSES)
CANCEL_WAIT_SECONDS = 10.0


def _state(request: Request) -> OpsState:
    state: OpsState = request.app.state.ops
    return state


def run_id_of(raw: str) -> str:
    try:
        return str(uuid.UUID(raw))
    except ValueError:
        raise not_found(raw) from None


State = Annotated[OpsState, Depends(_state)]
# A listing's page size: 50 runs unless asked, at most 200.
Page = Annotated[int, Query(ge=1, le=200)]


@router.get("/me", response_model=MeOut, tags=["principals"])
async def me(who: auth.Anyone) -> MeOut:
    """Who the token names and what it may do (the approvals page shows buttons by it; the
    routes check the scopes again)."""
    return MeOut(
        principal=who.name, scopes=sorted(who.scopes), may=who.effective(),
        profiles=who.grants.shown(),
    )  # fmt: skip


@router.get("/runs", response_model=RunPageOut, tags=["runs"])
async def list_runs(
    state: State,
    who: auth.Reader,
    status: RunStatus | None = None,
    profile: Annotated[str | None, Query(max_length=200)] = None,
    initiator: Annotated[str | None, Query(max_length=200)] = None,
    attention: Annotated[bool, Query(description="only runs that need an operator")] = False,
    limit: Page = 50,
    cursor: Annotated[str | None, Query(max_length=500)] = None,
) -> RunPageOut:
    """Newest first, filtered by status, profile, initiator and whether the run needs an
    operator; pass `next_cursor` back as `cursor` for the next page. STARTING: accepted
    starts no worker has begun, read from Temporal (one page, no cursor)."""
    if status is RunStatus.STARTING:
        mine = initiator if who.visible_to is None else who.visible_to
        if initiator is not None and initiator != mine:
            return RunPageOut(runs=[])  # another's runs: none visible
        listed = await starting_runs(
            state.require_runtime().client, initiator=mine, profile=profile, limit=limit
        )
        return RunPageOut(runs=await state.outs(listed))
    try:
        page = await asyncio.to_thread(
            lambda: state.query.page(
                visible_to=who.visible_to, status=status.value if status else None,
                profile=profile, initiator=initiator, needs_attention=attention, limit=limit,
                cursor=cursor,
            )
        )  # fmt: skip
    except BadCursorError:
        raise bad_request("bad_cursor", "the cursor is not one this server handed out") from None
    return RunPageOut(runs=await state.outs(page.runs), next_cursor=page.next_cursor)


@router.get("/runs/{run_id}", response_model=RunOut, tags=["runs"])
async def get_run(run_id: str, state: State, who: auth.Reader) -> RunOut:
    return await state.out(await state.visible(run_id_of(run_id), who.visible_to))


@router.get("/runs/{run_id}/budget", response_model=BudgetState, tags=["runs"])
async def run_budget(run_id: str, state: State, who: auth.Reader) -> BudgetState:
    """The run's budget as its workflow holds it: the limits, the spend, what its model
    calls in flight reserved (a call reserves its worst case before it is made) and the
    room left. Numbers only: the same at every privacy level."""
    view = await state.visible(run_id_of(run_id), who.visible_to)
    return await state.require_runtime().budget(view.run_id)


@router.get(
    "/runs/{run_id}/events",
    response_model=EventPageOut,
    tags=["runs"],
    responses={200: {"content": {"text/event-stream": {}}}},
)
async def run_events(
    run_id: str,
    request: Request,
    state: State,
    who: auth.Reader,
    after: Annotated[int, Query(ge=-1, le=MAX_SEQUENCE)] = -1,
    limit: Annotated[int, Query(ge=1, le=1000)] = 200,
    last_event_id: Annotated[str | None, Header(max_length=20)] = None,
) -> Response:
    """A page of the events committed after position `after`, in commit order; with
    `Accept: text/event-stream`, a live follow that resumes after `Last-Event-ID` (a
    position, each frame's `id`)."""
    view = await state.visible(run_id_of(run_id), who.visible_to)
    if "text/event-stream" in request.headers.get("accept", ""):
        start = resume_after(last_event_id, after)
        return StreamingResponse(
            follow(state, view.run_id, start, who.token_id),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )
    batch = await asyncio.to_thread(state.runs.events, view.run_id, after, limit + 1)
    page = EventPageOut(
        events=[event_out(e) for e in batch[:limit]],
        next_after=batch[:limit][-1].position if batch else after,
        more=len(batch) > limit,
    )
    return JSONResponse(page.model_dump(mode="json"))


@router.post("/runs/{run_id}/cancel", status_code=202, response_model=RunOut, tags=["runs"])
async def cancel_run(
    run_id: str, state: State, who: auth.Canceller, body: CancelIn | None = None
) -> RunOut:
    """Cancel as the authenticated principal; answers once the run ended (or 10 s)."""
    view = await state.visible(run_id_of(run_id), who.visible_to)
    if view.status.terminal:
        raise conflict("run_finished", f"run {view.run_id} already ended as {view.status.value}")
    reason = body.reason if body else None
    await state.require_runtime().cancel(view.run_id, by=who.name, reason=reason)
    done = await state.wait_for(view.run_id, lambda v: v.status.terminal, CANCEL_WAIT_SECONDS)
    return await state.out(done or view)


@router.get("/inbox", response_model=list[RunOut], tags=["approvals"])
async def inbox(state: State, who: auth.Reader, limit: Page = 50) -> list[RunOut]:
    """Runs waiting for approval, oldest first, with their pending calls at each run's
    privacy level."""
    return await _listed(state, state.query.inbox, who, limit)


@router.get("/attention", response_model=list[RunOut], tags=["runs"])
async def needs_attention(state: State, who: auth.Reader, limit: Page = 50) -> list[RunOut]:
    """Runs that need an operator, the most recently changed first: failed with a write's
    outcome unknown (`attention: outcome_unknown`; the run's `pending_write` names the
    call, its idempotency key and its arguments at the run's privacy level)."""
    return await _listed(state, state.query.attention, who, limit)


async def _listed(
    state: OpsState, listing: Callable[..., list[RunView]], who: Principal, limit: int
) -> list[RunOut]:
    """A run list (the inbox, the attention list) the principal may see, each at its run's
    privacy level."""
    views = await asyncio.to_thread(listing, visible_to=who.visible_to, limit=limit)
    return await state.outs(views)
