"""The example's worker-process tests use the worker tests' pool of processes."""

from tests.workers.conftest import pool

__all__ = ["pool"]
