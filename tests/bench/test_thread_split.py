"""bench.thread_split groups threads by part and splits a burst's CPU between them."""

import os
import threading
from collections import Counter

from bench.thread_split import OTHER, Snapshot, part_of, snapshot, split, table


def test_threads_are_grouped_by_what_they_do() -> None:
    assert part_of("agentrt-store").startswith("store pool")
    assert part_of("agentrt-tool").startswith("sync activities")
    assert part_of("temporal_workflow_") == part_of("workflow-proces") == "workflow activations"
    assert part_of("MainThread").startswith("event loop")
    assert part_of("something-else") == OTHER


def test_a_split_counts_every_tick_once_and_the_ended_threads_as_other() -> None:
    before = Snapshot({1: ("MainThread", 10, 1), 2: ("agentrt-store_0", 5, 0)}, (20, 5))
    after = Snapshot(
        {1: ("MainThread", 30, 3), 2: ("agentrt-store_0", 15, 2), 3: ("agentrt-store_1", 4, 0)},
        (70, 10),  # 55 ticks in all: 22 + 12 + 4 = 38 by live threads, 17 by ended ones
    )
    parts = split(before, after)
    assert parts["total"] == 55 and parts["system"] == 5
    assert parts[part_of("MainThread")] == 22
    assert parts[part_of("agentrt-store")] == 16  # both store threads, the new one from 0
    assert parts[OTHER] == 17


def test_a_snapshot_of_this_process_names_its_python_threads() -> None:
    done = threading.Event()
    t = threading.Thread(target=done.wait, name="agentrt-store_9")
    t.start()
    try:
        names = {name for name, _, _ in snapshot().threads.values()}
    finally:
        done.set()
        t.join()
    assert {"MainThread", "agentrt-store_9"} <= names


def test_the_table_reads_ms_per_run_and_the_store_pools_share() -> None:
    tick_ms = 1000 / os.sysconf("SC_CLK_TCK")
    agent = Counter({"total": 300, part_of("agentrt-store"): 60, part_of("MainThread"): 200})
    storeless = Counter({"total": 200, part_of("MainThread"): 200})
    text = table({"agent": (agent, 100, 10.0), "storeless": (storeless, 100, 8.0)})
    assert "ratio 1.50x" in text
    assert "(0.80x)" in text
    assert (
        f"the store's two pools: +{60 * tick_ms / 100:.1f} of the +{100 * tick_ms / 100:.1f}"
        in text
    )
