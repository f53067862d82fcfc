"""Issue 45's SQL budget, pinned: a k = 3 agent run (two reads, a non-idempotent write, the
answer: bench/drive.py `agent_once`) makes at most 8 commits of the runtime's own, counted as
`python -m bench.sqlcount` counts them (bench/sqlcount.py). The reads' steps ride with the
model calls after them (workflows/riding.py): no tool.execute commits."""

from pathlib import Path

from temporalio.client import Client

from agentrt.contracts.enums import EventKind
from agentrt.contracts.ids import ACT_MODEL_COMPLETE, ACT_TOOL_EXECUTE
from agentrt.core.settings import Settings
from bench.drive import agent_once
from bench.harness import bench_settings, running_worker
from bench.sqlcount import counting

MAX_COMMITS = 8  # issue 45: "commits at most 8" per k = 3 run (10 before reads rode along)


async def test_a_k3_agent_run_commits_at_most_eight_times(
    client: Client, settings: Settings, tmp_path: Path
) -> None:
    bench = bench_settings(
        database_url=settings.database.resolved_url(),
        seal_keys=settings.read_seal_keys(),
        data_dir=tmp_path,
    )
    async with running_worker(client, bench) as b:
        await agent_once(b, 3)  # warm: the first run builds statements and connections
        with counting(b.parts.engine) as tally:
            _, run_id = await agent_once(b, 3)
        events = b.runs.events(run_id)
    _, commits = tally.per_run([run_id])
    assert 0 < commits <= MAX_COMMITS, tally.shapes()
    # Both reads are recorded, and committed nothing of their own: each model call commits
    # once, with the reads before it.
    reads = [e for e in events if e.kind is EventKind.TOOL and e.payload["effect"] == "READ_ONLY"]
    assert len(reads) == 2
    assert tally.commits.get(ACT_TOOL_EXECUTE, 0) == 0
    assert tally.per_execution(ACT_MODEL_COMPLETE)[1] == 1
