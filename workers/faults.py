"""Test-only fault points. Production uses the no-op hook; these are built only when the
worker's settings name a point (AGENTRT_FAULT_BLOCK_AT / AGENTRT_FAULT_FAIL_AT)."""

import logging
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
    (a write keeps heartbeating): only the kill makes it a crash."""
    blocks = {p for p in block_at.split(",") if p}
    fails = {p for p in fail_at.split(",") if p}

    def hook(point: str) -> None:
        if point in fails:
            raise InjectedFault(point)
        if point in blocks:
            if marker_dir is not None:
                marker_dir.mkdir(parents=True, exist_ok=True)
                (marker_dir / point).write_text("reached\n")
            logger.warning("fault point %s reached: blocking", point)
            while True:
                time.sleep(3600)

    return hook
