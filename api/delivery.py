"""Push delivery, in the API process: reads the journal, POSTs each event (a StreamResponse)
to every config of its task in order, with the configured Authorization header; retries with
exponential backoff and records every attempt."""

import asyncio
import json
import logging

import httpx

from agentrt.api.settings import ApiSettings
from agentrt.store.a2a_journal import A2AJournal
from agentrt.store.a2a_push import A2APushStore, PushConfig
from agentrt.store.engine import DATABASE_ERRORS, database_reason

logger = logging.getLogger(__name__)

MEDIA_TYPE = "application/a2a+json"


class PushDelivery:
    def __init__(self, settings: ApiSettings, push: A2APushStore, journal: A2AJournal) -> None:
        self._settings = settings
        self._push = push
        self._journal = journal

    def _retry_in(self, attempts_so_far: int) -> float | None:
        if attempts_so_far + 1 >= self._settings.push_max_attempts:
            return None
        delay = self._settings.push_backoff_seconds * (2**attempts_so_far)
        return float(min(delay, self._settings.push_backoff_max_seconds))

    async def run(self, stop: asyncio.Event) -> None:
        async with httpx.AsyncClient(timeout=self._settings.push_timeout_seconds) as http:
            paused = False  # the database is away: said once, not every round
            while not stop.is_set():
                try:
                    busy = await self.tick(http)
                except DATABASE_ERRORS as exc:
                    if not paused:
                        reason = database_reason(exc)
                        logger.warning("push delivery paused: database error: %s", reason)
                    paused, busy = True, False
                except Exception:
                    logger.exception("push delivery round failed")
                    busy = False
                else:
                    if paused:
                        logger.warning("push delivery resumed: the database answers again")
                    paused = False
                if not busy:
                    try:
                        await asyncio.wait_for(stop.wait(), self._settings.api_poll_seconds)
                    except TimeoutError:
                        pass

    async def tick(self, http: httpx.AsyncClient) -> bool:
        lease = self._settings.push_timeout_seconds * 3
        configs = await asyncio.to_thread(self._push.claim, lease)
        await asyncio.gather(*(self._deliver_next(http, cfg) for cfg in configs))
        return bool(configs)

    async def _deliver_next(self, http: httpx.AsyncClient, cfg: PushConfig) -> None:
        events = await asyncio.to_thread(
            self._journal.events_after, cfg.task_id, cfg.delivered_through, 1
        )
        if not events:
            return
        event = events[0]
        attempts = await asyncio.to_thread(self._attempts, cfg, event.sequence)
        headers = {"Content-Type": MEDIA_TYPE}
        if cfg.auth_scheme:
            headers["Authorization"] = f"{cfg.auth_scheme} {cfg.auth_credentials or ''}".strip()
        if cfg.token:
            headers["X-A2A-Notification-Token"] = cfg.token
        ok, error = False, None
        try:
            reply = await http.post(cfg.url, content=json.dumps(event.payload), headers=headers)
            ok = 200 <= reply.status_code < 300
            error = None if ok else f"HTTP {reply.status_code}"
        except httpx.HTTPError as exc:
            error = type(exc).__name__
        retry = None if ok else self._retry_in(attempts)
        if not ok:
            logger.info("push to config %s of task %s failed (%s)", cfg.id, cfg.task_id, error)
        await asyncio.to_thread(
            lambda: self._push.record(cfg, event.sequence, ok=ok, error=error, retry_in=retry)
        )

    def _attempts(self, cfg: PushConfig, sequence: int) -> int:
        for d in self._push.deliveries(cfg.task_id, cfg.id):
            if d.sequence == sequence:
                return d.attempts
        return 0
