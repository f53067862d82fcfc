"""The test-only fault hook: `point#N` blocks only the Nth time the process reaches it."""

import threading
import time
from pathlib import Path

from agentrt.workers.faults import fault_hook


def test_a_numbered_point_blocks_only_at_its_nth_reach(tmp_path: Path) -> None:
    hook = fault_hook(block_at="model.before_provider#2", fail_at="", marker_dir=tmp_path)
    hook("model.before_provider")  # the first reach passes
    hook("tool.invoke")  # another point passes
    assert not list(tmp_path.iterdir())
    second = threading.Thread(target=hook, args=("model.before_provider",), daemon=True)
    second.start()  # the second reach blocks for good (the thread is a daemon)
    marker = tmp_path / "model.before_provider#2"
    deadline = time.monotonic() + 10
    while not marker.exists():
        assert time.monotonic() < deadline, "the second reach did not block"
        time.sleep(0.01)
    assert second.is_alive()
