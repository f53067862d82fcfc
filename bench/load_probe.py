"""Where the load section's start time goes, from outside the API: the dev server's own
latency for the start RPC (its Prometheus histogram, `--metrics-port`), and how late a
client process's event loop runs what is ready (a client whose loop lags adds that lag to
every latency it measures)."""

import asyncio
import contextlib
import re
import time
from collections.abc import AsyncIterator, Coroutine
from typing import Any

import httpx

from bench.report import Table
from bench.stats import percentile

# Temporal's frontend histogram of a request's time in the server, per operation.
_BUCKET = re.compile(
    r"^service_latency_bucket\{(?P<labels>[^}]*)\} (?P<count>[0-9.e+]+)$", re.MULTILINE
)
START_RPC = "StartWorkflowExecution"
LAG_EVERY = 0.05  # seconds between two probes of the loop


def _labels(text: str) -> dict[str, str]:
    return dict(re.findall(r'(\w+)="([^"]*)"', text))


async def buckets(metrics_url: str, operation: str = START_RPC) -> dict[float, float]:
    """The cumulative bucket counts (upper bound -> count) of `operation` in the frontend,
    summed over the user namespaces."""
    async with httpx.AsyncClient(timeout=10) as c:
        text = (await c.get(metrics_url)).text
    out: dict[float, float] = {}
    for m in _BUCKET.finditer(text):
        labels = _labels(m["labels"])
        if labels.get("operation") != operation or labels.get("service_name") != "frontend":
            continue
        if labels.get("namespace") == "temporal_system":
            continue
        le = float("inf") if labels["le"] == "+Inf" else float(labels["le"])
        out[le] = out.get(le, 0.0) + float(m["count"])
    return out


def histogram_percentile(
    before: dict[float, float], after: dict[float, float], pct: float
) -> float | None:
    """The `pct` percentile (seconds) of the requests between two scrapes, interpolated
    within its bucket as Prometheus' histogram_quantile does; None if there were none."""
    edges = sorted(after)
    counts = [after[e] - before.get(e, 0.0) for e in edges]
    if not counts or counts[-1] <= 0:
        return None
    want = counts[-1] * pct / 100
    lower, below = 0.0, 0.0
    for edge, cum in zip(edges, counts, strict=True):
        if cum >= want:
            if edge == float("inf"):
                return lower
            inside = cum - below
            return lower + (edge - lower) * ((want - below) / inside if inside else 1.0)
        lower, below = edge, cum
    return lower


def requests_between(before: dict[float, float], after: dict[float, float]) -> int:
    inf = float("inf")
    return int(after.get(inf, 0.0) - before.get(inf, 0.0))


@contextlib.asynccontextmanager
async def in_background(work: Coroutine[Any, Any, None]) -> AsyncIterator[None]:
    """`work` runs beside the block (a sampler that loops until cancelled), ended with it."""
    task = asyncio.create_task(work)
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


@contextlib.asynccontextmanager
async def loop_lag(into: list[float]) -> AsyncIterator[None]:
    """Sample, every LAG_EVERY s, how late this process's event loop wakes a task that
    asked to sleep that long: the wait any ready callback (an answer read) has at that
    moment."""

    async def sample() -> None:
        while True:
            asked = time.perf_counter()
            await asyncio.sleep(LAG_EVERY)
            into.append(max(0.0, time.perf_counter() - asked - LAG_EVERY))

    async with in_background(sample()):
        yield


def lag_summary(lags: list[float]) -> str:
    if not lags:
        return "-"
    xs = sorted(lags)
    return (
        f"p50 {1000 * percentile(xs, 50):.0f} / p95 {1000 * percentile(xs, 95):.0f} / "
        f"max {1000 * xs[-1]:.0f} ms"
    )


# Per level: its multiple, the dev server's start RPCs (n, p50 s, p95 s), the clients' loop
# lag samples and the CPU % of each process group.
LevelSeen = tuple[
    int, tuple[int, float | None, float | None], dict[str, list[float]], dict[str, float]
]


def where(store: str, levels: list[LevelSeen]) -> Table:
    """Where a start's time goes outside the API: the dev server's own time for the start
    RPC, and how busy and how late the client processes were."""
    table = Table(
        f"Load: the start RPC in the dev server, and the clients ({store})",
        ["level", "StartWorkflowExecution in the server: n, p50 / p95 ms",
         "client loop lag", "starts' process loop lag",
         "CPU % of a core: client, starts' process, dev server"],
    )  # fmt: skip
    for times, (n, p50, p95), lag, cpu_pct in levels:
        rpc = f"{n}, {1000 * p50:.0f} / {1000 * p95:.0f}" if p50 is not None and p95 else "-"
        cpu = ", ".join(
            f"{cpu_pct[k]:.0f}" if k in cpu_pct else "-" for k in ("client", "starts", "devserver")
        )
        table.rows.append(
            [f"{times}x", rpc, lag_summary(lag["client"]), lag_summary(lag["starts"]), cpu]
        )
    table.notes.append(
        "client: the bench's process (followers, deciders, watcher; the starts too with "
        "--load-client one); loop lag: how late a 50 ms sleep wakes, sampled all level long"
    )
    return table
