"""`agentrt --api URL`: the same commands through the operator HTTP API, as the principal
of a token (`--token` or AGENTRT_API_TOKEN). No database or Temporal credentials needed."""

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx

from agentrt.contracts.a2a import InputMessage
from agentrt.contracts.answers import RunAnswer
from agentrt.contracts.approval import ApprovalDecision
from agentrt.contracts.budget import BudgetState
from agentrt.contracts.errors import (
    AgentRuntimeError,
    ConfigError,
    InvalidRequestError,
    RunNotFoundError,
    StoreUnavailableError,
    TemporalUnavailableError,
)
from agentrt.contracts.live import LiveDelta
from agentrt.contracts.profiles import ITERATIONS_CEILING_LIMIT
from agentrt.contracts.reconcile_answer import ReconcileAnswer, WriteResolution
from agentrt.contracts.run import PROMPT_CHARS_CEILING
from agentrt.contracts.start import StartRequest, StartWait
from agentrt.contracts.views import EventView, RunView
from agentrt.starter.client import RuntimeClient
from agentrt.starter.live import follow_api, refusal

# A start the API could not make for an outage is sent again, under the same run id (so
# never a second run), this many times in all, RETRY_SECONDS apart.
START_ATTEMPTS = 4
RETRY_SECONDS = 1.0
# How long `result` waits for a run the API has never shown before it says there is none.
UNSEEN_SECONDS = 30.0


def _view(data: dict[str, Any]) -> RunView:
    pending = data.get("pending_approval")
    if pending is not None:  # arguments hidden at the run's privacy level show as none
        data["call_effects"] = {
            c["call_id"]: c["effect"] for c in pending["calls"] if c.get("effect")
        }
        for c in pending["calls"]:
            c["arguments"] = c.get("arguments") or {}
    write = data.get("pending_write")
    if write is not None:  # the API's name for the run's fenced write
        data["pending_effect"] = {**write, "privacy": data.get("privacy", "metadata")}
    return RunView.model_validate(data)


def answer_body(answer: RunAnswer) -> dict[str, Any]:
    """The answer as `POST /runs/{id}/answers` takes it (api/operator/answers.py): without
    its author and attestation (the API names and attests the token's principal)."""
    match answer:
        case ApprovalDecision():
            verdict = "approve" if answer.approved else "deny"
            return {"kind": "decision", "verdict": verdict, "turn_digest": answer.turn_digest,
                    "reason": answer.reason}  # fmt: skip
        case ReconcileAnswer():
            fields = {"kind", "call_id", "fence", "answer", "result", "then", "reason"}
            return answer.model_dump(include=fields)
        case WriteResolution():
            return answer.model_dump(include={"kind", "call_id", "fence", "outcome", "note"})
        case InputMessage():
            # A follow-up is the task owner's, through the A2A API that attests it for them.
            raise InvalidRequestError("a follow-up message goes through the A2A API")


class ApiRuntime(RuntimeClient):
    """A `RuntimeClient` over the operator API, acting as its token's principal."""

    def __init__(self, http: httpx.AsyncClient, poll_seconds: float = 0.25) -> None:
        self._http = http
        self._poll = poll_seconds
        self.acted_as: str | None = None  # the principal the API says acted, once known

    async def _call(self, method: str, path: str, **kw: Any) -> Any:
        try:
            reply = await self._http.request(method, path, **kw)
        except httpx.HTTPError as exc:
            raise AgentRuntimeError(
                f"cannot reach the API at {self._http.base_url}: {exc}"
            ) from None
        if reply.is_success:
            return reply.json() if reply.content else None  # 204: no body
        raise refusal(reply)

    async def call(self, method: str, path: str, **kw: Any) -> Any:
        """One call of the operator API as the token's principal: its JSON body (None for
        none), or its refusal as the typed error (schedules of runs use it)."""
        return await self._call(method, path, **kw)

    @property
    def max_prompt_chars(self) -> int:
        # The API applies its deployment's prompt cap; here only the ceiling of every cap.
        return PROMPT_CHARS_CEILING

    @property
    def max_iterations_ceiling(self) -> int:
        # The API applies its deployment's ceiling; here only the ceiling of every ceiling.
        return ITERATIONS_CEILING_LIMIT

    async def submit(
        self, request: StartRequest, *, initiator: str | None = None, wait: StartWait = "begun"
    ) -> str:
        if initiator is not None:
            raise InvalidRequestError("through the API the token's principal starts the run")
        # A run id of our own makes the start safe to send again: never a second run.
        body = request.model_dump(mode="json", exclude_none=True)
        body["run_id"] = str(request.run_id or uuid.uuid4())
        # RFC 7240: the API answers 202 (STARTING) once Temporal holds the run.
        headers = {"Prefer": "respond-async"} if wait == "accepted" else {}
        for _ in range(START_ATTEMPTS - 1):
            try:
                return str(
                    (await self._call("POST", "/runs", json=body, headers=headers))["run_id"]
                )
            except (TemporalUnavailableError, StoreUnavailableError):
                await asyncio.sleep(RETRY_SECONDS)
        return str((await self._call("POST", "/runs", json=body, headers=headers))["run_id"])

    async def status(self, run_id: str) -> RunView:
        return _view(await self._call("GET", f"/runs/{run_id}"))

    async def result(self, run_id: str) -> RunView:
        """Until the run is terminal (it may wait for someone's decision meanwhile). The API
        answers STARTING for a run Temporal holds, so a 404 is not "not begun yet": for a
        run seen before, it was withdrawn or failed to begin, and it is raised at once; for
        one never seen (a start another client sent a moment ago, an API that could not ask
        Temporal), after UNSEEN_SECONDS, never a wait without end."""
        seen = False
        unseen_until = asyncio.get_running_loop().time() + UNSEEN_SECONDS
        while True:
            try:
                view = await self.status(run_id)
            except RunNotFoundError:
                if seen or asyncio.get_running_loop().time() >= unseen_until:
                    raise
            else:
                if view.status.terminal:
                    return view
                seen = True
            await asyncio.sleep(self._poll)

    async def budget(self, run_id: str) -> BudgetState:
        return BudgetState.model_validate(await self._call("GET", f"/runs/{run_id}/budget"))

    async def events(self, run_id: str, after_position: int = -1) -> list[EventView]:
        out: list[EventView] = []
        while True:
            page = await self._call(
                "GET", f"/runs/{run_id}/events", params={"after": after_position, "limit": 1000}
            )
            out += [EventView.model_validate(e) for e in page["events"]]
            after_position = int(page["next_after"])
            if not page["more"]:
                return out

    def follow(self, run_id: str) -> AsyncIterator[EventView | LiveDelta]:
        return follow_api(self._http, run_id)

    async def _answer(self, run_id: str, answer: RunAnswer) -> RunView:
        # The token's principal answers: the API attests it, so the author is not sent.
        body = answer_body(answer)
        done = await self._call("POST", f"/runs/{run_id}/answers", json=body)
        self.acted_as = str(done["answered_by"])
        return _view(done["run"])

    async def cancel(self, run_id: str, *, by: str, reason: str | None = None) -> None:
        await self._call("POST", f"/runs/{run_id}/cancel", json={"reason": reason})

    async def inbox(self, limit: int = 50) -> list[RunView]:
        return [_view(r) for r in await self._call("GET", "/inbox", params={"limit": limit})]

    async def attention(self, limit: int = 50) -> list[RunView]:
        listed = await self._call("GET", "/attention", params={"limit": limit})
        return [_view(r) for r in listed]


@asynccontextmanager
async def api_session(url: str, token: str | None) -> AsyncIterator[ApiRuntime]:
    if not token:
        raise ConfigError("--api needs a token: pass --token or set AGENTRT_API_TOKEN")
    if not url.startswith(("http://", "https://")):
        raise ConfigError(f"--api {url!r} is not an http(s) URL")
    async with httpx.AsyncClient(
        base_url=url.rstrip("/"),
        headers={"Authorization": f"Bearer {token}"},
        timeout=httpx.Timeout(60),
    ) as http:
        yield ApiRuntime(http)
