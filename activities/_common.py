"""Helpers shared by the activity classes: store work off the event loop, typed failures,
bounded retries, fault points, a call's ToolContext. The heartbeat helpers are
activities/_heartbeats.py's, re-exported here beside the others."""

import asyncio
import contextlib
import contextvars
import functools
from collections.abc import Awaitable, Callable, Iterator, Sequence
from concurrent.futures import Executor
from typing import Any, ParamSpec, TypeVar

from temporalio import activity
from temporalio.exceptions import ApplicationError, ApplicationErrorCategory

from agentrt.activities._heartbeats import heartbeating as heartbeating
from agentrt.activities._heartbeats import heartbeats as heartbeats
from agentrt.activities._heartbeats import threadsafe_heartbeat
from agentrt.activities._loop_pool import LoopPool
from agentrt.activities.ports import Emit, FaultHook, ToolContext, no_faults
from agentrt.contracts.errors import NON_RETRYABLE, ErrorType
from agentrt.contracts.provider_errors import known_detail
from agentrt.contracts.run import ToolReply

P = ParamSpec("P")
T = TypeVar("T")


# DB-API (PEP 249) and SQLAlchemy names for "the database could not be reached or dropped
# the connection". Matched by name: activity definitions import no database library.
_UNAVAILABLE = frozenset({"OperationalError", "InterfaceError", "DisconnectionError"})


def is_store_unavailable(exc: BaseException) -> bool:
    if isinstance(exc, ApplicationError):
        return exc.type == ErrorType.STORE_UNAVAILABLE.value
    if getattr(exc, "connection_invalidated", False):
        return True
    return any(c.__name__ in _UNAVAILABLE for c in type(exc).__mro__)


def store_unavailable() -> ApplicationError:
    """Retryable, and its text names no host, port or driver (the driver's message does)."""
    return ApplicationError(
        "the store is unavailable",
        type=ErrorType.STORE_UNAVAILABLE.value,
        category=ApplicationErrorCategory.BENIGN,  # expected while it lasts: no traceback
    )


def store_work(fn: Callable[P, T]) -> Callable[P, T]:
    """A sync activity's store work (under `@activity.defn`; it runs on the worker's activity
    executor). A database that is away becomes StoreUnavailable: the workflow waits for it
    rather than blaming the step's own work."""

    @functools.wraps(fn)
    def guarded(*args: P.args, **kwargs: P.kwargs) -> T:
        return _store_call(fn, *args, **kwargs)

    return guarded


def _store_call(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """`fn(*args, **kwargs)` with a database that is away as StoreUnavailable."""
    try:
        return fn(*args, **kwargs)
    except Exception as exc:
        if not is_store_unavailable(exc) or isinstance(exc, ApplicationError):
            raise
        activity.logger.warning("store unavailable: %s", type(exc).__name__)
        raise store_unavailable() from None


# The worker's bounded store pool (workers/pool.py), set for each activity it runs by
# workers.pool.BlockingPool. An activity holds at most one of its threads at a time and
# never waits for another activity while it does, so a full pool only queues calls.
_pool: contextvars.ContextVar[Executor | None] = contextvars.ContextVar(
    "agentrt_blocking_pool", default=None
)


@contextlib.contextmanager
def blocking_pool(pool: Executor) -> Iterator[None]:
    """Blocking calls (`offload`, `db`) made in this block run on `pool`."""
    token = _pool.set(pool)
    try:
        yield
    finally:
        _pool.reset(token)


async def offload(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """Run a blocking call off the event loop, in this activity's context (its logger, its
    fault hook), on the worker's bounded pool. Outside a worker's activity (a test calling
    an activity method directly) no pool is set, and asyncio's default executor serves."""
    return await _off_loop(functools.partial(fn, *args, **kwargs))


async def db(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """A blocking store call off the event loop (`offload`), as `store_work` on the executor.
    (Not `offload(store_work(fn), ...)`: that made a wrapper, functools.wraps and all, on
    every call, about 1% of a run's worker CPU: bench/HISTORY.md set 10.)"""
    return await _off_loop(lambda: _store_call(fn, *args, **kwargs))


async def _off_loop(call: Callable[[], T]) -> T:
    pool = _pool.get()
    if pool is None:
        return await asyncio.to_thread(call)
    if isinstance(pool, LoopPool):  # the fast paths' store pool: no concurrent Future
        return await pool.call(call)
    run = contextvars.copy_context().run
    return await asyncio.get_running_loop().run_in_executor(pool, run, call)


class ActivityGroup:
    """An activity class that lists its own activities, so the worker registers it as one unit."""

    def activities(self) -> list[Callable[..., Any]]:
        bound = (getattr(self, name) for name in dir(type(self)) if not name.startswith("_"))
        return [m for m in bound if hasattr(m, "__temporal_activity_definition")]


def tool_context(
    run_id: str,
    call_id: str,
    idempotency_key: str,
    reply: ToolReply | None = None,
    emit: Emit | None = None,
) -> ToolContext:
    """The ToolContext of a call made in this activity."""
    return ToolContext(
        run_id, call_id, idempotency_key, heartbeat=threadsafe_heartbeat(),
        logger=activity.logger, reply=reply, emit=emit,
    )  # fmt: skip


def fatal(message: str, kind: ErrorType, *, expected: bool = False) -> ApplicationError:
    """A deterministic failure. `expected` (an operator's mistake, not a bug: an unknown
    profile, a provider's rejection) is BENIGN, which the SDK logs without a traceback;
    the caller logs it as one line."""
    category = ApplicationErrorCategory.BENIGN if expected else ApplicationErrorCategory.UNSPECIFIED
    return ApplicationError(message, type=kind.value, non_retryable=True, category=category)


# Provider failures that are the operator's to fix, never a bug of ours: one line, no trace.
_EXPECTED = frozenset({ErrorType.PROVIDER_REJECTED.value, ErrorType.UNKNOWN_PROVIDER.value})
_DETERMINISTIC = frozenset(e.value for e in NON_RETRYABLE)


_PROVIDER = frozenset({ErrorType.PROVIDER_REJECTED.value, ErrorType.PROVIDER_UNAVAILABLE.value})


def shown_detail(exc: ApplicationError) -> str:
    """What a log line may say of a failure: a provider's only in the known shapes
    (contracts/provider_errors.py), since its text may be the provider's own."""
    return known_detail(exc.message) if exc.type in _PROVIDER else exc.message


def expected_failure(exc: BaseException, where: str) -> BaseException:
    """`exc` as it should leave an activity: an expected ApplicationError (a rejection, or a
    provider away that the policy retries) is logged here as one line and made BENIGN (the
    SDK then logs no traceback); anything else as it is.

    A failure of a deterministic type (`NON_RETRYABLE`) always leaves non-retryable: the
    retry policies do not list those types (they would cost every scheduled activity's
    history event about 130 bytes), so a provider plug-in that raises ProviderRejected
    without the flag must not be retried for it either."""
    if not isinstance(exc, ApplicationError):
        return exc
    expected = exc.type in _EXPECTED
    final = exc.non_retryable or exc.type in _DETERMINISTIC
    # A provider that is away (a 529, a 503, a reset) is retried by the activity's policy:
    # one line per attempt saying which, never a traceback (issue 40: 50 lines each).
    retried = exc.type == ErrorType.PROVIDER_UNAVAILABLE.value and not final
    if expected:
        activity.logger.warning("%s: %s (%s)", where, shown_detail(exc), exc.type)
    elif retried:
        activity.logger.warning("%s: %s (%s); %s", where, shown_detail(exc), exc.type, _attempt())
    was_benign = exc.category is ApplicationErrorCategory.BENIGN
    benign = expected or retried or was_benign
    if benign == was_benign and final == exc.non_retryable:
        return exc
    return ApplicationError(
        exc.message,
        *exc.details,
        type=exc.type,
        non_retryable=final,
        next_retry_delay=exc.next_retry_delay,
        category=ApplicationErrorCategory.BENIGN if benign else exc.category,
    )


def _attempt() -> str:
    """`attempt 2 of 5, retried` (or `..., the last`) by the activity's retry policy."""
    info = activity.info()
    policy = info.retry_policy
    most = policy.maximum_attempts if policy is not None else 0
    if most <= 0:
        return f"attempt {info.attempt}, retried"
    return f"attempt {info.attempt} of {most}" + (
        ", retried" if info.attempt < most else ", the last"
    )


async def retried(
    step: Callable[[], Awaitable[T]],
    pauses: Sequence[float],
    retry_if: Callable[[Exception], bool],
    what: str,
) -> T:
    """`step`, tried again after each of `pauses` while it fails with an error `retry_if`
    accepts: a bounded retry inside one activity, for a step whose outcome must not be left
    to a Temporal retry. The last failure propagates."""
    for pause in (*pauses, None):
        try:
            return await step()
        except Exception as exc:
            if pause is None or not retry_if(exc):
                raise
            activity.logger.warning("%s: %s, again in %ss", what, type(exc).__name__, pause)
        await asyncio.sleep(pause)
    raise AssertionError("unreachable: the last attempt returns or raises")


async def fault(hook: FaultHook, point: str) -> None:
    """Reach a test fault point. Off the event loop (a test hook may block), but without a
    thread hop for the production no-op."""
    if hook is not no_faults:
        await db(hook, point)
