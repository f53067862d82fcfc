"""Following a run until it settles, with a live spinner; each pending turn handed once
to a handler that may ask on the terminal."""

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterator
from datetime import UTC, datetime
from typing import Any

from rich.console import Console

from agentrt.contracts.approval import PendingApproval
from agentrt.contracts.enums import RunStatus
from agentrt.contracts.errors import RunNotFoundError
from agentrt.contracts.views import RunView
from agentrt.starter.client import RuntimeClient

OnWaiting = Callable[[RunView, PendingApproval], Awaitable[None]]


async def watch(
    runtime: RuntimeClient,
    run_id: str,
    console: Console,
    *,
    on_waiting: OnWaiting | None = None,
    poll_seconds: float = 0.25,
    spinner: bool = True,
) -> RunView:
    """Follow a run with a live spinner until its workflow closes; returns the settled run.

    The workflow's result decides the end (so an unknown profile, which never creates a
    row, still ends the wait with its typed error); the store feeds the spinner. Each
    pending turn is handed to `on_waiting` once. With `spinner=False` none is drawn (the
    model's text is printed as it comes meanwhile).
    """
    result = asyncio.create_task(runtime.result(run_id))
    seen: set[str] = set()
    last, count, round_ = -1, 0, 0
    started = datetime.now(UTC)
    try:
        with _status(console, f"run {run_id}: starting", spinner) as spinning:
            while not result.done():
                view = await _maybe_status(runtime, run_id)
                if view is None:
                    waited = (datetime.now(UTC) - started).total_seconds()
                    if waited > 2:  # a polling worker begins a run within moments
                        spinning.update(f"run {run_id}: no worker has begun it ({waited:.0f}s)")
                else:
                    fresh = await runtime.events(run_id, after_position=last)
                    if fresh:
                        last, count = fresh[-1].position, count + len(fresh)
                        round_ = fresh[-1].round
                    spinning.update(
                        f"run {run_id}: {view.status.value} · round {round_} · {count} event(s)"
                    )
                    pending = view.pending_approval
                    if (
                        view.status is RunStatus.WAITING_FOR_APPROVAL
                        and pending is not None
                        and pending.turn_digest not in seen
                    ):
                        seen.add(pending.turn_digest)
                        if on_waiting is not None:
                            spinning.stop()  # the handler may print or ask on the terminal
                            await on_waiting(view, pending)
                            spinning.start()
                await asyncio.wait({result}, timeout=poll_seconds)
        return result.result()
    finally:
        result.cancel()


class _NoSpinner:
    def update(self, _text: str) -> None:
        pass

    def stop(self) -> None:
        pass

    def start(self) -> None:
        pass


@contextlib.contextmanager
def _status(console: Console, text: str, shown: bool) -> Iterator[Any]:
    if not shown:
        yield _NoSpinner()
        return
    with console.status(text) as status:
        yield status


async def _maybe_status(runtime: RuntimeClient, run_id: str) -> RunView | None:
    """The run once a worker has begun it; None while it is STARTING (or has no row)."""
    try:
        view = await runtime.status(run_id)
    except RunNotFoundError:
        return None  # failed to begin, or withdrawn: the awaited result raises why
    return None if view.status is RunStatus.STARTING else view
