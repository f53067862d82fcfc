"""What the fuzz job makes before its surfaces run: tasks in each state, runs waiting for an
approval, for an operator's reconcile answer (on a second worker whose writes die and whose
probe is down) and for input, and signed-in codec sessions."""

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from temporalio.client import Client

from agentrt.api.settings import ApiSettings
from agentrt.starter.facade import AgentRuntime
from agentrt.store.a2a.tasks import A2AStore
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import WorkerResources, build
from agentrt.workers.main import make_worker

REFUND = "Please refund order 1042"


def a2a_headers(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}", "A2A-Version": "1.0"}


async def send_task(url: str, key: str, text: str) -> str:
    """A new A2A task for `text` (blocking: it has reached a wait or its end)."""
    message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": text}]}
    async with httpx.AsyncClient(timeout=60) as http:
        reply = await http.post(
            url + "/",
            json={"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                  "params": {"message": message}},
            headers=a2a_headers(key),
        )  # fmt: skip
    task_id: str = reply.json()["result"]["task"]["id"]
    return task_id


async def known_tasks(url: str, key: str) -> list[str]:
    """A completed task, one waiting for input, one waiting for approval."""
    return [await send_task(url, key, t) for t in ("hello", "which order", "refund order 1042")]


def input_task_maker(
    url: str, key: str, parts: WorkerResources, loop: asyncio.AbstractEventLoop
) -> tuple[Any, Any]:
    """(new_task, state_of) for the input surface, which runs in a thread: a task waiting
    for input made on the job's loop, and a task's state as the store has it."""
    store = A2AStore(parts.ctx)

    def new_task() -> str:
        return asyncio.run_coroutine_threadsafe(send_task(url, key, "which order"), loop).result(60)

    def state_of(task_id: str) -> str | None:
        rec = store.get(task_id, None)
        return None if rec is None else rec.state

    return new_task, state_of


async def waiting_runs(runtime: AgentRuntime, n: int, profile: str = "helper") -> dict[str, str]:
    """n runs waiting for approval: run id -> the digest of the pending turn."""
    out: dict[str, str] = {}
    for i in range(n):
        run_id = await runtime.start(profile, f"refund order 10{i:02d}", initiator="fuzz")
        for _ in range(400):
            try:
                view = await runtime.status(run_id)
            except Exception:  # no row until the worker begins the run
                view = None
            if view is not None and view.pending_approval is not None:
                out[run_id] = view.pending_approval.turn_digest
                break
            await asyncio.sleep(0.05)
        else:
            raise RuntimeError(f"run {run_id} never waited for approval")
    return out


class WritesDie:
    """A worker's fault hook: every write dies after its claim and the reconcile probe's
    target is down, so each write's outcome is unknown (`on_unknown_outcome: ask` waits)."""

    def __call__(self, point: str) -> None:
        if point in ("write.after_claim", "reconcile.before_probe"):
            raise RuntimeError(f"fuzz: injected fault at {point}")


@asynccontextmanager
async def reconcile_runs(
    client: Client, settings: ApiSettings, url: str, ops_token: str, n: int = 3
) -> AsyncIterator[dict[str, dict[str, str]]]:
    """n runs of `asker` waiting for an answer, on a worker of their own (its faults touch
    no other surface's runs): run id -> {"call_id", "fence"} of its pending write."""
    queue = f"fuzz-asker-{uuid.uuid4().hex[:8]}"
    mine = settings.replace(temporal={"task_queue": queue})
    parts = build(mine, faults=WritesDie())
    try:
        async with make_worker(client, parts, mine):
            runtime = AgentRuntime(client, RunStore(parts.ctx), queue)
            ids = [await runtime.start("asker", REFUND, initiator="fuzz") for _ in range(n)]
            yield {run_id: await _pending_write(url, ops_token, run_id) for run_id in ids}
    finally:
        parts.close()


async def _pending_write(url: str, token: str, run_id: str) -> dict[str, str]:
    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        for _ in range(1200):  # the probe is tried about 8 s first
            run = (
                await http.get(f"/runs/{run_id}", headers={"Authorization": f"Bearer {token}"})
            ).json()
            if run.get("status") == "AWAITING_RECONCILIATION" and run.get("pending_write"):
                write = run["pending_write"]
                return {"call_id": write["call_id"], "fence": write["fence"]}
            await asyncio.sleep(0.05)
    raise RuntimeError(f"run {run_id} never waited for a reconcile answer")
