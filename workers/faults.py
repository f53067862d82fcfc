"""Test-only fault points. Production uses the no-op hook; these are built only when the
worker's settings name a point (AGENTRT_FAULT_BLOCK_AT / AGENTRT_FAULT_FAIL_AT)."""

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

logger = logging.getLogger(__name__)


class InjectedFault(RuntimeError):
    """Raised at a fault point named by AGENTRT_FAULT_FAIL_AT."""


def fault_hook(*, block_at: str, fail_at: str, marker_dir: Path | None) -> Callable[[str], None]:
    """Blocking parks the calling thread at the point for good (a marker file says it got
    there), so a test can SIGKILL the process there deterministically rather than by timing
    luck. Activities call the hook off the event loop, so the process stays alive meanwhile
    (a write keeps heartbeating): only the kill makes it a crash.

    `point#N` blocks only the Nth time this process reaches `point` (a child agent's first
    model call is the process's second, after its parent's); its marker is `point#N`."""
    blocks = {p for p in block_at.split(",") if p}
    fails = {p for p in fail_at.split(",") if p}
    reached: dict[str, int] = {}
    lock = threading.Lock()

    def hook(point: str) -> None:
        if point in fails:
            raise InjectedFault(point)
        with lock:  # activities reach points from several threads
            reached[point] = count = reached.get(point, 0) + 1
        for name in (point, f"{point}#{count}"):
            if name in blocks:
                _block(name, marker_dir)

    return hook


def _block(name: str, marker_dir: Path | None) -> None:
    if marker_dir is not None:
        marker_dir.mkdir(parents=True, exist_ok=True)
        (marker_dir / name).write_text("reached\n")
    logger.warning("fault point %s reached: blocking", name)
    while True:
        time.sleep(3600)
