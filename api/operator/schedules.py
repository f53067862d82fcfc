"""`/schedules`: schedules of runs (starter/scheduling.py) on the operator API, as the
authenticated principal, who is recorded as the creator (each fire's run names
`schedule:<name> by <principal>` as its initiator).

`schedules:read` lists and shows; `schedules:manage` changes. A principal sees and acts on
only the schedules of profiles it is granted (another's is "not found", as a run it may
not read is); what makes runs happen (create, resume, trigger, backfill) also needs
`runs:start`, so no schedule starts what its principal could not start by hand. Every
check comes before the one Temporal call: a refusal changes nothing."""

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict

from agentrt.api.grants import refusal
from agentrt.api.operator import auth
from agentrt.api.operator.auth import Principal
from agentrt.api.operator.errors import RESPONSES, bad_request, forbidden, not_granted
from agentrt.api.operator.routes import State
from agentrt.api.operator.starts import json_body
from agentrt.api.operator.state import OpsState
from agentrt.contracts.errors import InvalidRequestError, ScheduleNotFoundError
from agentrt.contracts.registered import RegisteredProfile
from agentrt.contracts.schedules import ScheduleRequest, ScheduleView, is_schedule_name
from agentrt.starter.scheduling import RunSchedules

schedules_router = APIRouter(responses=RESPONSES, tags=["schedules"])
Reader = Annotated[Principal, Depends(auth.require(auth.SCHEDULES_READ))]
Manager = Annotated[Principal, Depends(auth.require(auth.SCHEDULES_MANAGE))]
_CREATE_SCHEMA = {"application/json": {"schema": ScheduleRequest.model_json_schema()}}


class ScheduleListOut(BaseModel):
    schedules: list[ScheduleView]


class BackfillIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    start: datetime
    end: datetime


def _schedules(state: OpsState) -> RunSchedules:
    return RunSchedules(state.require_runtime())


def _may_start(who: Principal) -> None:
    if not who.has(auth.START):
        raise forbidden(f"the token of {who.name} lacks the scope {auth.START}")


async def _granted(state: OpsState, who: Principal, profile: str) -> RegisteredProfile | None:
    """Whether `who` may start `profile` (None: no worker registers it, only an admin's)."""
    registered = await state.on_start_lane(state.profiles.get, profile)
    if registered is None:
        return None
    return registered if who.grants.allows(registered) else None


async def _visible(state: OpsState, who: Principal, name: str) -> ScheduleView:
    """The schedule, if `who` may see it: another's profile is not found, as is a name
    that is not a schedule's."""
    if not is_schedule_name(name):
        raise ScheduleNotFoundError(f"no schedule of runs {name!r}")
    view = await _schedules(state).get(name)
    if not who.grants.everything and await _granted(state, who, view.profile) is None:
        raise ScheduleNotFoundError(f"no schedule of runs {name!r}")
    return view


@schedules_router.get("/schedules", response_model=ScheduleListOut)
async def list_schedules(state: State, who: Reader) -> ScheduleListOut:
    """The schedules of the profiles this principal may start, by name (Temporal's
    visibility: a schedule just made shows a moment later)."""
    shown = []
    for view in await _schedules(state).list():
        if who.grants.everything or await _granted(state, who, view.profile) is not None:
            shown.append(view)
    return ScheduleListOut(schedules=shown)


@schedules_router.post(
    "/schedules",
    status_code=201,
    response_model=ScheduleView,
    openapi_extra={"requestBody": {"required": True, "content": _CREATE_SCHEMA}},
)
async def create_schedule(request: Request, state: State, who: Manager) -> ScheduleView:
    """Create a schedule of runs as this principal (its creator). Bad input (a malformed
    cron, an unknown profile) and a profile it may not start are refused; nothing is made."""
    _may_start(who)
    runtime = state.require_runtime()
    body = ScheduleRequest.checked(
        runtime.max_prompt_chars,
        await json_body(request),
        max_iterations_ceiling=runtime.max_iterations_ceiling,
    )
    profile = await state.on_start_lane(state.profiles.get, body.profile)
    if profile is None:
        raise bad_request(
            "unknown_profile",
            f"unknown agent profile {body.profile!r}: no worker has registered it",
        )
    if not who.grants.allows(profile):
        raise not_granted(refusal(who.name, profile))
    return await _schedules(state).create(body, created_by=who.name, registered=profile)


@schedules_router.get("/schedules/{name}", response_model=ScheduleView)
async def show_schedule(name: str, state: State, who: Reader) -> ScheduleView:
    return await _visible(state, who, name)


@schedules_router.post("/schedules/{name}/pause", response_model=ScheduleView)
async def pause_schedule(name: str, state: State, who: Manager) -> ScheduleView:
    await _visible(state, who, name)
    await _schedules(state).pause(name, by=who.name)
    return await _schedules(state).get(name)


@schedules_router.post("/schedules/{name}/resume", response_model=ScheduleView)
async def resume_schedule(name: str, state: State, who: Manager) -> ScheduleView:
    _may_start(who)
    await _visible(state, who, name)
    await _schedules(state).resume(name, by=who.name)
    return await _schedules(state).get(name)


@schedules_router.post("/schedules/{name}/trigger", status_code=202, response_model=ScheduleView)
async def trigger_schedule(name: str, state: State, who: Manager) -> ScheduleView:
    """One fire now, under the schedule's overlap policy (a fire still running: skipped)."""
    _may_start(who)
    view = await _visible(state, who, name)
    await _schedules(state).trigger(name)
    return view


@schedules_router.post("/schedules/{name}/backfill", status_code=202, response_model=ScheduleView)
async def backfill_schedule(
    name: str, body: BackfillIn, state: State, who: Manager
) -> ScheduleView:
    """The fires the schedule's spec had between `start` and `end` (zoned times)."""
    _may_start(who)
    if body.start.tzinfo is None or body.end.tzinfo is None:
        raise InvalidRequestError("start and end must name their time zone")
    view = await _visible(state, who, name)
    await _schedules(state).backfill(name, body.start, body.end)
    return view


@schedules_router.delete("/schedules/{name}", status_code=204)
async def delete_schedule(name: str, state: State, who: Manager) -> Response:
    """The schedule goes; its runs go on."""
    await _visible(state, who, name)
    await _schedules(state).delete(name)
    return Response(status_code=204)
