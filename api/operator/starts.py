"""`POST /runs`: a start as the authenticated principal, begun (the default: it answers
once a worker has begun the run) or accepted (`Prefer: respond-async`, RFC 7240: 202 once
Temporal holds the run, status STARTING), and the one answer a start sent again gets.

A start no worker began within the bound was withdrawn (503 `no_worker` or `busy`, with
Retry-After); the same start sent again under its run id answers that same 503 while the
withdrawal stands, never the run as live (starter/_withdrawal.py)."""

import json
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Request
from fastapi.responses import Response

from agentrt.api.grants import refusal
from agentrt.api.operator import auth
from agentrt.api.operator.auth import Principal
from agentrt.api.operator.errors import RESPONSES, bad_request, conflict, not_granted
from agentrt.api.operator.routes import State
from agentrt.api.operator.state import OpsState
from agentrt.api.operator.timing import Phases
from agentrt.api.operator.views import StartedOut, run_out
from agentrt.contracts.enums import RunStatus
from agentrt.contracts.errors import RunIdTakenError
from agentrt.contracts.registered import RegisteredProfile
from agentrt.contracts.start import StartRequest
from agentrt.contracts.views import RunView

starts_router = APIRouter(responses=RESPONSES)
BEGIN_WAIT_SECONDS = 10.0
RESPOND_ASYNC = "respond-async"


def respond_async(prefer: str | None) -> bool:
    """Whether a `Prefer` header (RFC 7240: preferences, comma separated, each maybe with a
    value and parameters) asks for `respond-async`."""
    for preference in (prefer or "").split(","):
        token = preference.split(";", 1)[0].split("=", 1)[0].strip().lower()
        if token == RESPOND_ASYNC:
            return True
    return False


async def json_body(request: Request) -> dict[str, Any]:
    """The request's body as a JSON object, or 400 invalid_request."""
    try:
        data = json.loads(await request.body())
    except ValueError:
        raise bad_request("invalid_request", "the body is not JSON") from None
    if not isinstance(data, dict):
        raise bad_request("invalid_request", "the body must be a JSON object")
    return data


async def _start_body(request: Request, state: State) -> StartRequest:
    """The body of `POST /runs`, validated once, with this deployment's prompt cap, which
    FastAPI's own body validation cannot be given. Refusals are the runtime's typed errors
    (400 invalid_request, 413 prompt_too_long)."""
    data = await json_body(request)
    runtime = state.require_runtime()
    return StartRequest.checked(
        runtime.max_prompt_chars, data, max_iterations_ceiling=runtime.max_iterations_ceiling
    )


_START_SCHEMA = {"application/json": {"schema": StartRequest.model_json_schema()}}
_PREFER = (
    "`respond-async`: answer 202 once Temporal holds the run (status STARTING), without "
    "waiting for a worker to begin it"
)


@starts_router.post(
    "/runs",
    status_code=201,
    response_model=StartedOut,
    tags=["runs"],
    responses={
        200: {"model": StartedOut, "description": "a repeat of a start: its run"},
        202: {"model": StartedOut, "description": "accepted (Prefer: respond-async): STARTING"},
    },
    openapi_extra={"requestBody": {"required": True, "content": _START_SCHEMA}},
)
async def start_run(
    request: Request,
    state: State,
    who: auth.Starter,
    body: Annotated[StartRequest, Depends(_start_body)],
    response: Response,
    prefer: Annotated[str | None, Header(description=_PREFER)] = None,
) -> StartedOut:
    """Start a run as the authenticated principal (its initiator). With `run_id`, a retry
    of the same start (same principal, same profile) answers 200 with the run it started,
    or the same 503 if that start was withdrawn."""
    accepted = respond_async(prefer)
    timing = Phases(response, getattr(request.state, "token_seconds", None))
    if accepted:
        response.headers["Preference-Applied"] = RESPOND_ASYNC
    status, out = await begin(state, who, body, accepted=accepted, timing=timing)
    response.status_code = status
    return out


async def begin(
    state: OpsState,
    who: Principal,
    body: StartRequest,
    *,
    accepted: bool = False,
    timing: Phases | None = None,
) -> tuple[int, StartedOut]:
    """The start of `POST /runs`, for every front that starts runs as a principal (the
    MCP server too): the status it answers with (201 started, 200 a repeat, 202 accepted)
    and the run. Refusals raise before any write."""
    # The profile and, for a run id sent again, its run: one hop to the start path's
    # threads, not one each (under load each hop waits its turn for a thread and the GIL).
    profile, earlier = await state.on_start_lane(_reads, who, body, state)
    if timing is not None:
        timing.mark("reads")
    profile = _startable(profile, who, body)
    runtime = state.require_runtime()
    wanted = None if body.run_id is None else str(body.run_id)
    if earlier is not None:
        return 200, await _repeat(state, who, body, earlier)
    try:
        run_id = await runtime.submit(
            body,
            initiator=who.name,
            wait="accepted" if accepted else "begun",
            registered=profile,  # read just now: not again, on the default executor
        )
        if timing is not None:
            timing.mark("temporal")
    except RunIdTakenError as exc:
        assert wanted is not None
        earlier = await _taken_run(state, wanted, accepted)
        if earlier is None:
            raise conflict("run_id_taken", str(exc)) from None
        return 200, await _repeat(state, who, body, earlier)
    if accepted:
        return 202, _accepted_out(run_id, body, who, profile)
    view = await state.wait_for(run_id, lambda v: True, BEGIN_WAIT_SECONDS)
    return 201, StartedOut(run_id=run_id, run=await state.out(view) if view else None)


def _startable(
    profile: RegisteredProfile | None, who: Principal, body: StartRequest
) -> RegisteredProfile:
    """The profile to start, refused before any write when no worker registered it or the
    principal was not granted it."""
    if profile is None:
        raise bad_request(
            "unknown_profile",
            f"unknown agent profile {body.profile!r}: no worker has registered it",
        )
    if not who.grants.allows(profile):
        raise not_granted(refusal(who.name, profile))  # before any write
    return profile


async def _taken_run(state: OpsState, wanted: str, accepted: bool) -> RunView | None:
    """The run of a start whose run id Temporal already holds, not withdrawn, with its row
    not written yet: a start of the same request that Temporal accepted while its answer
    was lost. A begun start waits for its row as the first send would have; then, or at
    once for an accepted start, the run as Temporal holds it (STARTING): the first send's
    process may be gone (its API killed), and no worker may have begun the run yet. None
    when there is no such run to answer with."""
    earlier = None
    if not accepted:
        earlier = await state.wait_for(wanted, lambda v: True, BEGIN_WAIT_SECONDS)
    if earlier is None:
        earlier = await state.require_runtime().starting(wanted)
    if earlier is None:  # begun meanwhile (its row), or not held open at all
        wait = BEGIN_WAIT_SECONDS if accepted else 0.0
        earlier = await state.wait_for(wanted, lambda v: True, wait)
    return earlier


def _accepted_out(
    run_id: str, body: StartRequest, who: Principal, profile: RegisteredProfile
) -> StartedOut:
    # What a GET reads from Temporal until a worker begins it, without asking it again.
    starting = RunView(
        run_id=run_id, profile=body.profile, status=RunStatus.STARTING,
        created_at=datetime.now(UTC), initiator=who.name,
    )  # fmt: skip
    # Its level as its workers registered it (the entry read above), with no thread hop.
    return StartedOut(run_id=run_id, run=run_out(starting, profile.privacy))


def _reads(
    who: Principal, body: StartRequest, state: OpsState
) -> tuple[RegisteredProfile | None, RunView | None]:
    """The start's store reads, on a start-path thread: the profile as its workers
    registered it, then the run of a run id sent again. The run is read only for a
    profile this principal may start: a refused start reads nothing more."""
    profile = state.profiles.get(body.profile)
    if profile is None or body.run_id is None or not who.grants.allows(profile):
        return profile, None
    return profile, state.runs.get(str(body.run_id))


async def _repeat(state: OpsState, who: Principal, body: StartRequest, run: RunView) -> StartedOut:
    """The answer to a start whose run id names an existing run: that run, when it is this
    principal's start of this profile and was not withdrawn; refused otherwise."""
    if run.initiator != who.name or run.profile != body.profile:
        raise conflict("run_id_taken", f"run id {run.run_id} is taken by another start")
    if run.status is not RunStatus.COMPLETED:  # an answer that got there first stands
        withdrawn = await state.require_runtime().withdrawal(run.run_id)
        if withdrawn is not None:
            raise withdrawn
    return StartedOut(run_id=run.run_id, run=await state.out(run))
