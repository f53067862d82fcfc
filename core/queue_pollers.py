"""`agentrt_task_queue_pollers{task_queue, kind}`: how many workers polled each task queue a
process depends on, as Temporal's DescribeTaskQueue lists them, so that an alert can say
"nobody polls this queue" (deploy/prometheus/alerts.yml, AgentrtTaskQueueNoPoller).

Temporal keeps a poller listed for minutes after its worker is gone, with the time it last
polled; an idle worker polls again whenever its long poll expires (about every 60 s, on the
dev server and on a cluster's defaults). So a poller counts while it polled within
RECENT (120 s): an idle live worker always does, a dead one drops out two minutes after it
died.

Read in the background (`running`), every EVERY seconds, never at scrape time: the scrape runs
on prometheus-client's thread, the Temporal client on the process's event loop. A pass that
Temporal does not answer leaves the queue without a sample (the Temporal and store alerts
speak for an outage), and a value older than three passes is not served at all."""

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from prometheus_client import CollectorRegistry
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client
from temporalio.service import RPCError

logger = logging.getLogger("agentrt.metrics")

NAME = "agentrt_task_queue_pollers"
RECENT = timedelta(seconds=120)
EVERY = 15.0
RPC_TIMEOUT = timedelta(seconds=5)  # a Temporal that hangs costs a pass, not the watch
_TYPES = {
    "workflow": TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
    "activity": TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
}


@dataclass(frozen=True, order=True)
class Watched:
    """A task queue and which of its task kinds (`workflow` or `activity`) is watched."""

    task_queue: str
    kind: str

    def __post_init__(self) -> None:
        if self.kind not in _TYPES:
            raise ValueError(f"kind must be one of {sorted(_TYPES)}, not {self.kind!r}")


async def recent_pollers(
    client: Client, watched: Watched, within: timedelta = RECENT, now: datetime | None = None
) -> int:
    """How many workers polled `watched` within `within` (RPCError: Temporal did not say)."""
    described = await client.workflow_service.describe_task_queue(
        DescribeTaskQueueRequest(
            namespace=client.namespace,
            task_queue=TaskQueue(name=watched.task_queue),
            task_queue_type=_TYPES[watched.kind],
        ),
        timeout=RPC_TIMEOUT,
    )
    since = (now or datetime.now(UTC)) - within
    return sum(
        1
        for p in described.pollers
        if not p.HasField("last_access_time") or p.last_access_time.ToDatetime(UTC) >= since
    )


class QueuePollers(Collector):
    """The gauge, from the last pass of `refresh` (see the module's docstring)."""

    def __init__(self, client: Client, queues: Callable[[], Iterable[Watched]]) -> None:
        self._client = client
        self._queues = queues
        self._counts: dict[Watched, int] = {}
        self._at = 0.0  # monotonic time of the last pass
        self._fresh_for = 3 * EVERY  # a value older than three passes is not served
        self._unread = False  # the last pass could not read a queue (logged once)

    async def refresh(self) -> dict[Watched, int]:
        """One pass over the queues; what it found (a queue Temporal did not answer for is
        left out)."""
        try:
            watched = sorted(set(await asyncio.to_thread(lambda: list(self._queues()))))
        except Exception as exc:  # the list comes from the store, which may be away
            logger.warning("task queue pollers not read: %s", type(exc).__name__)
            watched = sorted(self._counts)
        counts: dict[Watched, int] = {}
        unread: list[str] = []
        for w in watched:
            try:
                counts[w] = await recent_pollers(self._client, w)
            except RPCError as exc:
                unread.append(f"{w.task_queue} ({exc.status.name if exc.status else 'error'})")
            except RuntimeError:  # the SDK's bridge could not connect at all
                unread.append(f"{w.task_queue} (unreachable)")
        if unread and not self._unread:  # once per outage, not every pass
            logger.warning("task queue pollers not read from Temporal: %s", ", ".join(unread))
        self._unread = bool(unread)
        self._counts, self._at = counts, time.monotonic()
        return counts

    async def run(self, every: float = EVERY) -> None:
        """`refresh` every `every` seconds, until cancelled. A pass that fails in a way
        nobody foresaw is logged; the next one is tried all the same."""
        self._fresh_for = 3 * every
        while True:
            try:
                await self.refresh()
            except Exception:
                logger.exception("task queue pollers: the pass failed")
            await asyncio.sleep(every)

    @contextlib.asynccontextmanager
    async def running(self, every: float = EVERY) -> AsyncIterator["QueuePollers"]:
        """`run` in a task for the duration of the block."""
        task = asyncio.create_task(self.run(every), name="agentrt-queue-pollers")
        try:
            yield self
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def collect(self) -> Sequence[GaugeMetricFamily]:
        family = GaugeMetricFamily(
            NAME,
            f"Workers that polled the task queue within the last {RECENT.seconds} s, as "
            "Temporal lists them (kind: workflow or activity tasks).",
            labels=["task_queue", "kind"],
        )
        if self._at and time.monotonic() - self._at <= self._fresh_for:
            for w, n in sorted(self._counts.items()):
                family.add_metric([w.task_queue, w.kind], float(n))
        return [family]


def watch_queues(
    registry: CollectorRegistry, client: Client, queues: Callable[[], Iterable[Watched]]
) -> QueuePollers:
    """Register the gauge in `registry`; the caller keeps it `running` while the process runs."""
    pollers = QueuePollers(client, queues)
    registry.register(pollers)
    return pollers
