"""A model worker's live writes in a process of their own, for the cross-process wake tests
(tests/live/test_live_wake_processes.py):
`python -m tests.live._publisher URL SEAL_KEYS [--no-wake]`, then one JSON line per
publish on stdin (`{"run_id", "sequence", "offset", "text"}`); it answers `published`
once each has committed (and rung: store/live/table.py; with `--no-wake`, not rung: a
publisher whose wakes are all lost)."""

import json
import sys

from agentrt.store.db.open import open_store
from agentrt.store.db.sealing import Sealer
from agentrt.store.live.table import LiveStore, Piece


def main() -> None:
    engine, ctx = open_store(sys.argv[1], Sealer.from_b64(sys.argv[2]), run_migrations=False)
    live = LiveStore(ctx)
    if "--no-wake" in sys.argv[3:]:
        live.__dict__["_ringer"] = None  # the cached ringer: none
    print("ready", flush=True)
    for line in sys.stdin:
        p = json.loads(line)
        piece = Piece(int(p["sequence"]), 1, "delta", int(p["offset"]), str(p["text"]))
        live.publish(str(p["run_id"]), [piece])
        print("published", flush=True)
    engine.dispose()


if __name__ == "__main__":
    main()
