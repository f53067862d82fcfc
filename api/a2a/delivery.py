"""Push delivery, in the API process: reads the journal, POSTs each event (a StreamResponse)
to every config of its task in order, with the configured Authorization header.

Each POST goes to an address checked at that moment (core/outbound.py), follows no redirect
and has one deadline for the whole attempt. A failure is retried with exponential backoff,
a bounded number of times; then the config is a dead letter (state in the store, counted
by agentrt_push_dead_letters_total, one log line). A target refused at delivery, or one
the HTTP client cannot send to, is a dead letter at once. Deliveries run concurrently,
at most `push_client_concurrency` per client (the task's owner) and `push_max_in_flight`
in all, so one client's slow webhooks never hold up another client's pushes."""

import asyncio
import functools
import json
import logging

import httpx

from agentrt.api.a2a.push import policy
from agentrt.api.settings import ApiSettings
from agentrt.core.logs import withhold_urls
from agentrt.core.outbound import Refused, Resolver, check_url, pinned, resolve, system_resolver
from agentrt.store.a2a.journal import A2AJournal
from agentrt.store.a2a.push import A2APushStore, PushConfig
from agentrt.store.db.engine import DATABASE_ERRORS, database_reason

logger = logging.getLogger(__name__)

MEDIA_TYPE = "application/a2a+json"


class _Final(Exception):
    """A failure no retry can mend: the config becomes a dead letter at once."""


class PushDelivery:
    def __init__(
        self,
        settings: ApiSettings,
        push: A2APushStore,
        journal: A2AJournal,
        resolver: Resolver = system_resolver,
    ) -> None:
        withhold_urls()  # httpx logs every request's URL at INFO: a webhook's path and token
        self._settings = settings
        self._push = push
        self._journal = journal
        self._policy = policy(settings)
        self._resolver = resolver
        self._busy: dict[str, int] = {}  # owner -> deliveries in flight
        self._flying: set[asyncio.Task[None]] = set()
        self._freed = asyncio.Event()

    def _retry_in(self, attempts_so_far: int) -> float | None:
        if attempts_so_far + 1 >= self._settings.push.max_attempts:
            return None
        delay = self._settings.push.backoff_seconds * (2**attempts_so_far)
        return float(min(delay, self._settings.push.backoff_max_seconds))

    async def run(self, stop: asyncio.Event) -> None:
        timeout = httpx.Timeout(self._settings.push.timeout_seconds)
        async with httpx.AsyncClient(timeout=timeout, follow_redirects=False) as http:
            try:
                await self._dispatch(http, stop)
            finally:
                for task in list(self._flying):
                    task.cancel()
                await asyncio.gather(*self._flying, return_exceptions=True)

    async def _dispatch(self, http: httpx.AsyncClient, stop: asyncio.Event) -> None:
        paused = False  # the database is away: said once, not every round
        while not stop.is_set():
            try:
                busy = await self.tick(http)
            except DATABASE_ERRORS as exc:
                if not paused:
                    logger.warning("push delivery paused: database error: %s", database_reason(exc))
                paused, busy = True, False
            except Exception:
                logger.exception("push delivery round failed")
                busy = False
            else:
                if paused:
                    logger.warning("push delivery resumed: the database answers again")
                paused = False
            if not busy:
                await self._idle(stop)

    async def _idle(self, stop: asyncio.Event) -> None:
        """Until the poll interval passes, a delivery ends (its config may have more), or stop."""
        self._freed.clear()
        waits = [asyncio.create_task(stop.wait()), asyncio.create_task(self._freed.wait())]
        try:
            await asyncio.wait(
                waits, timeout=self._settings.api.poll_seconds, return_when="FIRST_COMPLETED"
            )
        finally:
            for w in waits:
                w.cancel()

    async def tick(self, http: httpx.AsyncClient) -> bool:
        """Claim what is due, within the limits, and start delivering it; True when some was."""
        room = self._settings.push.max_in_flight - len(self._flying)
        if room <= 0:
            return False
        cap = self._settings.push.client_concurrency
        busy = dict(self._busy)
        lease = self._settings.push.timeout_seconds * 3
        configs = await asyncio.to_thread(
            lambda: self._push.claim(lease, min(room, 50), busy=busy, per_owner=cap)
        )
        for cfg in configs:
            self._busy[cfg.owner] = self._busy.get(cfg.owner, 0) + 1
            task = asyncio.create_task(self._deliver_next(http, cfg))
            self._flying.add(task)
            task.add_done_callback(functools.partial(self._done, owner=cfg.owner))
        return bool(configs)

    def _done(self, task: asyncio.Task[None], owner: str) -> None:
        self._flying.discard(task)
        self._busy[owner] -= 1
        if not self._busy[owner]:
            del self._busy[owner]
        self._freed.set()
        if not task.cancelled() and (exc := task.exception()) is not None:
            if isinstance(exc, DATABASE_ERRORS):
                logger.warning("push delivery: database error: %s", database_reason(exc))
            else:
                logger.error("push delivery failed: %s", type(exc).__name__, exc_info=exc)

    async def _deliver_next(self, http: httpx.AsyncClient, cfg: PushConfig) -> None:
        events = await asyncio.to_thread(
            self._journal.events_after, cfg.task_id, cfg.delivered_through, 1
        )
        if not events:
            return
        event = events[0]
        attempts = await asyncio.to_thread(self._attempts, cfg, event.sequence)
        ok, error, final = False, None, False
        try:
            async with asyncio.timeout(self._settings.push.timeout_seconds):
                ok, error = await self._post(http, cfg, json.dumps(event.payload))
        except _Final as exc:
            error, final = str(exc), True
        except TimeoutError:
            error = "timed out"
        except ConnectionError as exc:
            error = str(exc)
        except httpx.HTTPError as exc:
            error = type(exc).__name__
        except Exception as exc:  # a defect of ours: still bounded by the retries
            error = f"unexpected {type(exc).__name__}"
            if attempts == 0:  # its traceback once, not at every retry
                logger.error("push to config %s failed unexpectedly", cfg.id, exc_info=exc)
        retry = None if ok or final else self._retry_in(attempts)
        if not ok and retry is None:
            logger.warning(
                "push to config %s of task %s is a dead letter after %d attempt(s): %s",
                cfg.id, cfg.task_id, attempts + 1, error,
            )  # fmt: skip
        elif not ok:
            logger.info("push to config %s of task %s failed (%s)", cfg.id, cfg.task_id, error)
        await asyncio.to_thread(
            lambda: self._push.record(cfg, event.sequence, ok=ok, error=error, retry_in=retry)
        )

    async def _post(self, http: httpx.AsyncClient, cfg: PushConfig, body: str) -> tuple[bool, str]:
        """One POST to a checked address of the URL's host; (delivered, what went wrong)."""
        try:
            # Again: a config may predate these checks, or another allow-list.
            target = check_url(cfg.url, self._policy)
            addresses = await resolve(target, self._policy, self._resolver)
        except Refused as exc:
            raise _Final(f"refused: {exc}") from None
        for n, ip in enumerate(addresses):
            url, headers, extensions = pinned(target, ip)
            headers.update(self._headers(cfg))
            try:
                request = http.build_request(
                    "POST", url, content=body, headers=headers, extensions=extensions
                )
            except Exception as exc:  # a URL or header the HTTP client will never send
                reason = f"the HTTP client refuses the request ({type(exc).__name__})"
                raise _Final(reason) from None
            try:
                # The reply's body is never read: a webhook cannot make us buffer it.
                reply = await http.send(request, follow_redirects=False, stream=True)
            except httpx.ConnectError:
                if n + 1 < len(addresses):
                    continue  # the next checked address of the name (IPv4 after IPv6)
                raise
            await reply.aclose()
            ok = 200 <= reply.status_code < 300
            return ok, "" if ok else f"HTTP {reply.status_code}"
        raise ConnectionError("the push host has no address")

    @staticmethod
    def _headers(cfg: PushConfig) -> dict[str, str]:
        headers = {"Content-Type": MEDIA_TYPE}
        if cfg.auth_scheme:
            headers["Authorization"] = f"{cfg.auth_scheme} {cfg.auth_credentials or ''}".strip()
        if cfg.token:
            headers["X-A2A-Notification-Token"] = cfg.token
        return headers

    def _attempts(self, cfg: PushConfig, sequence: int) -> int:
        for d in self._push.deliveries(cfg.task_id, cfg.id):
            if d.sequence == sequence:
                return d.attempts
        return 0
