"""Where the time to first token goes through the runtime (bench/first_token.py), from each
run's history (the dev server's clock) and the client's wall clock on the same machine:

- `start → first task`: the Update-with-Start reaching the server and its first workflow
  task reaching the worker;
- `first task`: that task (the begin, a local activity that writes the run row, and the
  workflow code up to scheduling the model call);
- `model call dispatched`: the task's completion to the model activity started;
- `activity → first token seen`: the model activity started to the client's first text,
  less the direct call's time to first token measured beside it (the transcript read, the
  provider's overhead over the direct call, the live write, the follower's wake and read).
Each is the median over the case's runs."""

import statistics
from dataclasses import dataclass

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

PIECES = (
    "start → first task",
    "first task",
    "model call dispatched",
    "activity → first token seen",
)


@dataclass(frozen=True)
class Timed:
    run_id: str
    began: float  # client wall clock (time.time()) before `runtime.start`
    seen: float  # and at the first text
    direct: float  # the direct call's time to first token, beside this run


async def split(client: Client, timed: Timed) -> dict[str, float]:
    history = await client.get_workflow_handle(timed.run_id).fetch_history()
    first_started = first_completed = activity_started = None
    for e in history.events:
        t = e.event_time.ToNanoseconds() / 1e9
        if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED and first_started is None:
            first_started = t
        elif (
            e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED and first_completed is None
        ):
            first_completed = t
        elif (
            e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED and activity_started is None
        ):
            activity_started = t
    assert first_started and first_completed and activity_started, timed.run_id
    return dict(
        zip(
            PIECES,
            (
                first_started - timed.began,
                first_completed - first_started,
                activity_started - first_completed,
                timed.seen - activity_started - timed.direct,
            ),
            strict=True,
        )
    )


async def split_lines(client: Client, cases: dict[str, list[Timed]]) -> list[str]:
    """A markdown table: one row per piece, one column per case, medians in ms."""
    splits = {name: [await split(client, t) for t in timed] for name, timed in cases.items()}
    lines = [
        "| piece | " + " | ".join(cases) + " |",
        "|---" * (len(cases) + 1) + "|",
    ]
    for piece in PIECES:
        cells = [f"{statistics.median(s[piece] for s in splits[n]) * 1000:.1f} ms" for n in cases]
        lines.append(f"| {piece} | " + " | ".join(cells) + " |")
    return lines
