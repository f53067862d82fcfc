"""The completion's worker-process tests use the worker tests' pool of processes."""

from tests.workers.conftest import arm, pool

__all__ = ["arm", "pool"]
