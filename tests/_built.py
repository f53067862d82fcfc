"""A worker's resources (workers/compose.build) that a test or fixture owns: built from
its settings, and closed afterwards, whatever happened (which withdraws its profiles'
registration, stops its pools and disposes its engine)."""

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from agentrt.core.settings import Settings
from agentrt.workers.compose import WorkerResources, build


@contextmanager
def built(
    settings: Settings, *, faults: Callable[[str], None] | None = None
) -> Iterator[WorkerResources]:
    resources = build(settings, faults=faults)
    try:
        yield resources
    finally:
        resources.close()
