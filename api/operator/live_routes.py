"""`GET /runs/{id}/live`: a run's events and its live output as Server-Sent Events (the
follow is api/operator/sse.py's), under the same principal and scope rules as its events."""

from typing import Annotated

from fastapi import APIRouter, Header, Query
from fastapi.responses import Response, StreamingResponse

from agentrt.api.operator import auth
from agentrt.api.operator.errors import RESPONSES
from agentrt.api.operator.routes import State, run_id_of
from agentrt.api.operator.sse import follow, resume_live
from agentrt.api.wake import MAX_SEQUENCE

live_router = APIRouter(responses=RESPONSES)


@live_router.get(
    "/runs/{run_id}/live",
    tags=["runs"],
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}}},
)
async def run_live(
    run_id: str,
    state: State,
    who: auth.Reader,
    after: Annotated[int, Query(ge=-1, le=MAX_SEQUENCE)] = -1,
    live_after: Annotated[int, Query(ge=0, le=MAX_SEQUENCE)] = 0,
    last_event_id: Annotated[str | None, Header(max_length=24)] = None,
) -> Response:
    """The run's events and its live output (`delta`, `retract`) as Server-Sent Events,
    resuming after `Last-Event-ID` (`<sequence>:<live id>`)."""
    view = await state.visible(run_id_of(run_id), who.visible_to)
    start, live_start = resume_live(last_event_id, after, live_after)
    return StreamingResponse(
        follow(state, view.run_id, start, who.token_id, live_start),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )
