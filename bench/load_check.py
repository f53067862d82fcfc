"""The load section's checks: what the clients saw against what the store holds.

- follows: every event of a followed run seen exactly once and in order (against the
  run's events as `GET /runs/{id}/events` pages them afterwards);
- the ledger: one `demo_ledger` row per approved run (the refund; an approval whose answer
  was lost counts as approved if its run completed), none for another run;
- starts answered live (200/201 with a live status) whose run later ended CANCELLED as
  withdrawn (the start path gave up on a run it had said was running)."""

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import httpx
from sqlalchemy import func, select

from agentrt.store.db.context import StoreContext
from agentrt.store.db.tables import DemoLedgerRow
from bench.load_drive import Tally


async def event_ids(c: httpx.AsyncClient, run_id: str) -> tuple[list[int], str, list[int]]:
    """The run's events' positions as the API pages them (the truth a follow is checked
    against: a follow's frame ids are positions, in commit order), their payloads as text,
    and their sequences."""
    ids: list[int] = []
    sequences: list[int] = []
    text: list[str] = []
    after = -1
    while True:
        reply = await c.get(f"/runs/{run_id}/events", params={"after": after, "limit": 1000})
        page: dict[str, Any] = reply.json()
        ids += [e["position"] for e in page["events"]]
        sequences += [e["sequence"] for e in page["events"]]
        text += [json.dumps(e.get("payload")) for e in page["events"]]
        after = page["next_after"]
        if not page["more"]:
            return ids, "\n".join(text), sequences


@dataclass
class Checked:
    follow_lost: int = 0  # events of a followed run a follower never saw
    follow_duplicated: int = 0  # events a follower saw twice
    out_of_order: int = 0  # events seen after a later one
    follows_unended: int = 0  # follows that never saw `end`
    ledger_lost: int = 0  # approved runs without their ledger row
    ledger_duplicated: int = 0  # rows past the one per approved run, or for another run
    withdrawn: int = 0  # answered live, then withdrawn
    statuses: Counter[str] = field(default_factory=Counter)
    runs_unended: int = 0  # started (2xx) and not terminal by the deadline
    # Events of the followed runs committed after one of a higher sequence (a follow by
    # sequence would have skipped each): what the parallel profile is there to produce.
    late: int = 0

    @property
    def lost(self) -> int:
        return self.follow_lost + self.ledger_lost + self.runs_unended

    @property
    def duplicated(self) -> int:
        return self.follow_duplicated + self.out_of_order + self.ledger_duplicated


def _ledger(ctx: StoreContext, run_ids: list[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    q = select(DemoLedgerRow.run_id, func.count()).group_by(DemoLedgerRow.run_id)
    with ctx.reads() as s:
        for i in range(0, len(run_ids), 500):
            chunk = run_ids[i : i + 500]
            for run_id, n in s.execute(q.where(DemoLedgerRow.run_id.in_(chunk))).all():
                counts[run_id] = int(n)
    return counts


async def check(c: httpx.AsyncClient, ctx: StoreContext, t: Tally) -> Checked:
    out = Checked()
    run_ids = list(t.run_ids.values())
    out.statuses = Counter(t.final.get(r, "not ended") for r in run_ids)
    out.runs_unended = out.statuses["not ended"]
    truth: dict[str, list[int]] = {}
    for f in t.follows:
        run_id = t.run_ids.get(f.run)
        if run_id is None:
            continue
        if run_id not in truth:
            ids, _, sequences = await event_ids(c, run_id)
            truth[run_id] = ids
            out.late += sum(
                1 for i, s in enumerate(sequences) if s < max(sequences[:i], default=-1)
            )
        want = truth[run_id]
        out.follow_lost += len(set(want) - set(f.seen))
        out.follow_duplicated += len(f.seen) - len(set(f.seen))
        out.out_of_order += sum(1 for a, b in zip(f.seen, f.seen[1:], strict=False) if b < a)
        out.follows_unended += not f.ended
    ledger = _ledger(ctx, run_ids)
    # An approval whose answer was lost (the API killed) was applied if its run went on to
    # complete (a bench-load run completes only once approved): one row is due then too.
    approved = t.approved | {r for r in t.unanswered if t.final.get(r) == "COMPLETED"}
    for run_id in run_ids:
        rows = ledger.get(run_id, 0)
        if run_id in approved:
            out.ledger_lost += rows == 0
            out.ledger_duplicated += max(0, rows - 1)
        else:
            out.ledger_duplicated += rows
    for run_id in t.answered_live:
        if t.final.get(run_id) == "CANCELLED" and "withdrawn" in (await event_ids(c, run_id))[1]:
            out.withdrawn += 1
    return out
