"""Activity options, in one place. Timeouts come from the run plan so a run replays the same."""

from datetime import timedelta

from temporalio.common import RetryPolicy
from temporalio.workflow import ActivityConfig, LocalActivityConfig

from agentrt.contracts.profiles import Timeouts

# No `non_retryable_error_types`: every deterministic failure (contracts.errors
# NON_RETRYABLE) leaves its activity with non_retryable set, where it is raised (`fatal`,
# the providers, and `expected_failure` for a provider plug-in's own). Listing the types
# here as well cost about 130 bytes in every scheduled activity's history event.
STORE_RETRY = RetryPolicy(
    initial_interval=timedelta(milliseconds=200),
    maximum_interval=timedelta(seconds=10),
)


def store_call() -> ActivityConfig:
    """Short idempotent database work: begin, fence, refuse, fail."""
    return {"start_to_close_timeout": timedelta(seconds=10), "retry_policy": STORE_RETRY}


def withdraw_call() -> ActivityConfig:
    """Telling a write's target to stop waiting, as its run is cancelled: a few tries, so a
    target that is away holds the cancel up by seconds, not for as long as it is away."""
    return {
        "start_to_close_timeout": timedelta(seconds=15),
        "retry_policy": RetryPolicy(initial_interval=timedelta(seconds=1), maximum_attempts=3),
    }


def local_store_call() -> LocalActivityConfig:
    """`store_call` as a local activity (begin, the fence's stamp): retried by this worker,
    durably once past the local retry threshold."""
    return {"start_to_close_timeout": timedelta(seconds=10), "retry_policy": STORE_RETRY}


def settle_call() -> ActivityConfig:
    """The run's terminal write (fail / cancel): retried until it lands, however long the
    database is away, with capped backoff. No workflow closes with its run non-terminal."""
    return {
        "start_to_close_timeout": timedelta(seconds=10),
        "retry_policy": RetryPolicy(
            initial_interval=timedelta(milliseconds=200), maximum_interval=timedelta(seconds=10)
        ),
    }


def bounded_store_call() -> ActivityConfig:
    """A transition that must not retry forever: after three failures the run is failed
    instead (a suspension that cannot be persisted ends SUSPEND_FAILED)."""
    return {
        "start_to_close_timeout": timedelta(seconds=10),
        "retry_policy": RetryPolicy(
            initial_interval=timedelta(milliseconds=200),
            maximum_attempts=3,
        ),
    }


def on_queue(config: ActivityConfig, task_queue: str | None) -> ActivityConfig:
    """The config on the plan's queue for this call; None keeps the workflow's own."""
    return config if task_queue is None else {**config, "task_queue": task_queue}


def model_call(t: Timeouts) -> ActivityConfig:
    return _heartbeating(t.model_seconds, t, timedelta(seconds=1), timedelta(seconds=30))


def tool_call(t: Timeouts) -> ActivityConfig:
    return _heartbeating(t.tool_seconds, t, timedelta(milliseconds=500), timedelta(seconds=10))


def _heartbeating(
    seconds: float, t: Timeouts, first_retry: timedelta, longest_retry: timedelta
) -> ActivityConfig:
    """A call of up to `seconds` that heartbeats while it works (the model's provider, a
    tool): a dead worker costs seconds. Five attempts, backing off between the two."""
    return {
        "start_to_close_timeout": timedelta(seconds=seconds),
        "heartbeat_timeout": timedelta(seconds=t.heartbeat_seconds),
        "retry_policy": RetryPolicy(
            initial_interval=first_retry, maximum_interval=longest_retry, maximum_attempts=5
        ),
    }
