"""What the operator routes share; the runtime is bound when the app starts."""

import asyncio
import contextlib
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

from temporalio.service import RPCError

from agentrt.api.operator.errors import not_found
from agentrt.api.operator.feeds import Feeds, TokenChecks
from agentrt.api.operator.views import RunOut, run_out
from agentrt.api.wake import Waker
from agentrt.contracts.enums import RunStatus
from agentrt.contracts.schedules import sees
from agentrt.contracts.views import RunView
from agentrt.starter._starting_view import starting_view
from agentrt.starter.facade import AgentRuntime
from agentrt.store.db.sealing import Sealer
from agentrt.store.live.table import LiveStore
from agentrt.store.ops.registry import ProfileRegistry
from agentrt.store.runs.pending_context import pending_contexts
from agentrt.store.runs.query import RunQuery
from agentrt.store.runs.record import RunStore
from agentrt.store.security.principals import PrincipalStore

# A token's answer is reused this long by its other streams (each stream asks every 1 s:
# api/operator/sse.py); the two together bound how long a revoked token's stream lives.
TOKEN_CHECK_SECONDS = 0.5
# The start path's store reads (its token, its profile, a run id sent again) run on threads
# of their own. The default executor has min(32, cpus + 4) threads (6 on two cores), and
# under load the followers' polls and the begun starts' waits keep them all busy: an
# accepted start, a few milliseconds of reads, queued seconds behind them for a thread.
START_THREADS = 4
T = TypeVar("T")


@dataclass
class OpsState:
    runs: RunStore
    query: RunQuery
    principals: PrincipalStore
    waker: Waker
    sealer: Sealer
    profiles: ProfileRegistry  # what the workers registered
    live: LiveStore  # the model workers' live output
    runtime: AgentRuntime | None = None
    # Every follow of a run shares one poll of it (api/operator/feeds.py), and every
    # stream of a token one recheck of it.
    feeds: Feeds = field(init=False)
    tokens: TokenChecks = field(init=False)
    start_lane: ThreadPoolExecutor = field(init=False)

    def __post_init__(self) -> None:
        self.feeds = Feeds(self.runs, self.waker, self.live.mark, self._held_open)
        self.tokens = TokenChecks(self.principals.active, TOKEN_CHECK_SECONDS)
        self.start_lane = ThreadPoolExecutor(START_THREADS, thread_name_prefix="agentrt-start")

    async def on_start_lane(self, fn: Callable[..., T], *args: Any) -> T:
        """`fn(*args)` on the start path's own threads (not the default executor's)."""
        return await asyncio.get_running_loop().run_in_executor(self.start_lane, partial(fn, *args))

    async def _held_open(self, run_id: str) -> bool:
        """Whether Temporal holds `run_id` open with no worker having begun it (no row yet);
        False when Temporal cannot say: the follow ends as for a run that is not there."""
        if self.runtime is None:
            return False
        with contextlib.suppress(RPCError):
            return await self.runtime.starting(run_id) is not None
        return False

    def require_runtime(self) -> AgentRuntime:
        if self.runtime is None:
            raise RuntimeError("the app has not started (lifespan not run)")
        return self.runtime

    async def visible(self, run_id: str, visible_to: str | None) -> RunView:
        """The run if this principal may see it; 404 alike for absent and not visible. A
        run Temporal holds that no worker has begun (no row) is STARTING, read from
        Temporal. When Temporal cannot say, the outage's 503 (temporal_unavailable): a 404
        would tell a client waiting on an accepted start that its run is gone."""
        view = await asyncio.to_thread(self.runs.get, run_id)
        if view is None and self.runtime is not None:
            # No row, read just now: ask Temporal alone (`runtime.starting` would read the
            # row a second time first).
            view = await starting_view(self.runtime.client, run_id)
        if view is None or not sees(visible_to, view.initiator):
            raise not_found(run_id)
        return view

    async def out(self, view: RunView) -> RunOut:
        return (await self.outs([view]))[0]

    async def outs(self, views: list[RunView]) -> list[RunOut]:
        """Each run at its privacy level; a waiting run with what the decider reads its calls
        against. One thread hop and two queries for the whole list (the levels, the pending
        contexts), off the event loop: redaction reads every argument."""
        if not views:
            return []
        rounds = {v.run_id: v.pending_approval.round for v in views if v.pending_approval}

        def shown() -> list[RunOut]:
            begun = [v.run_id for v in views if v.status is not RunStatus.STARTING]
            levels = self.query.privacies(begun)
            contexts = pending_contexts(self.runs.ctx, rounds) if rounds else {}
            return [
                run_out(v, levels[v.run_id], contexts.get(v.run_id))
                if v.run_id in levels
                else run_out(v, self._registered_privacy(v))
                for v in views
            ]

        return await asyncio.to_thread(shown)

    def _registered_privacy(self, view: RunView) -> str:
        """A starting run has no row yet: the level its workers registered."""
        registered = self.profiles.get(view.profile)
        return registered.privacy if registered else "metadata"

    async def wait_for(
        self, run_id: str, done: Callable[[RunView], bool], seconds: float
    ) -> RunView | None:
        """Re-read the run on each of its commits until `done(view)` or the time is up."""
        deadline = time.monotonic() + seconds
        while True:
            ticket = self.waker.ticket(run_id)
            view = await asyncio.to_thread(self.runs.get, run_id)
            if view is not None and done(view):
                return view
            left = deadline - time.monotonic()
            if left <= 0:
                return view
            await self.waker.wait(run_id, ticket, within=left)
