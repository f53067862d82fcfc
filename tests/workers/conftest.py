"""Shared fixtures of the worker-process tests."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.workers._proc import WorkerPool


@pytest.fixture
def pool(tmp_path: Path) -> Iterator[WorkerPool]:
    """Every worker process a test spawns, none left running after it, whatever happened."""
    p = WorkerPool(tmp_path)
    yield p
    p.close()
