"""A2A errors of our own, mapped through the SDK's tables (one place; SDK churn stays here)."""

import functools
import inspect
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

from a2a.server.jsonrpc_models import JSONRPCError
from a2a.server.request_handlers import response_helpers
from a2a.utils import errors as sdk_errors
from a2a.utils.errors import (
    A2AError,
    ContentTypeNotSupportedError,
    InternalError,
    TaskNotCancelableError,
    UnsupportedOperationError,
)
from sqlalchemy.exc import SQLAlchemyError

from agentrt.store.db.engine import database_reason

logger = logging.getLogger(__name__)

DATABASE_MESSAGE = "the database could not serve this: try again"
INTERNAL_MESSAGE = "the server could not serve this: try again"


class ResultNotRetainableError(UnsupportedOperationError):
    """UnsupportedOperationError (-32004) whose ErrorInfo reason is RESULT_NOT_RETAINABLE:
    the profile's answer level (metadata / none) cannot keep a task's result or history."""

    message = (
        "This agent's answer level keeps no result, so it cannot serve A2A tasks "
        "(RESULT_NOT_RETAINABLE)."
    )


class ProfileNotGrantedError(UnsupportedOperationError):
    """UnsupportedOperationError (-32004) whose ErrorInfo reason is PROFILE_NOT_GRANTED
    (REST: 403 PERMISSION_DENIED): the caller's key is not granted the skill's profile
    (AGENTRT_API_KEY_PROFILES). Nothing was created."""

    message = "This API key is not granted the skill's profile (PROFILE_NOT_GRANTED)."


def _own(cls: type[UnsupportedOperationError], http: int, status: str, reason: str) -> None:
    sdk_errors.JSON_RPC_ERROR_CODE_MAP[cls] = -32004
    sdk_errors.A2A_ERROR_MAPPING[cls] = sdk_errors.ErrorMapping(http, status, reason)
    sdk_errors.A2A_ERROR_REASONS[cls] = reason
    response_helpers.EXCEPTION_MAP[cls] = JSONRPCError


def register() -> None:
    """Teach the SDK's error tables our subclasses (they look types up exactly)."""
    _own(ResultNotRetainableError, 400, "FAILED_PRECONDITION", "RESULT_NOT_RETAINABLE")
    _own(ProfileNotGrantedError, 403, "PERMISSION_DENIED", "PROFILE_NOT_GRANTED")
    # The REST binding's status codes (spec 5.4): a content type we do not serve is 415
    # and a task that cannot be canceled (it is terminal) is a 409 conflict, where the
    # SDK's table answers 400 for both. JSON-RPC codes are unchanged (-32005, -32002).
    mapping = sdk_errors.A2A_ERROR_MAPPING
    mapping[ContentTypeNotSupportedError] = mapping[ContentTypeNotSupportedError]._replace(
        http_code=415
    )
    mapping[TaskNotCancelableError] = mapping[TaskNotCancelableError]._replace(http_code=409)


register()


T = TypeVar("T", bound=type)


def _clean(exc: Exception, method: str) -> A2AError:
    """What the client sees for an error that is not one of the A2A errors we raise: a
    fixed message. The SDK would send str(exc): for a database error, the SQL statement
    and its bound parameters. The cause goes to the log, in one line."""
    if isinstance(exc, SQLAlchemyError):
        logger.error("A2A %s: database error: %s", method, database_reason(exc))
        return InternalError(message=DATABASE_MESSAGE)
    logger.error("A2A %s: %s", method, type(exc).__name__, exc_info=exc)
    return InternalError(message=INTERNAL_MESSAGE)


def _guard(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    if inspect.isasyncgenfunction(fn):

        @functools.wraps(fn)
        async def stream(*args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            inner = fn(*args, **kwargs)
            try:
                async for item in inner:
                    yield item
            except A2AError:
                raise
            except Exception as exc:
                raise _clean(exc, name) from None
            finally:
                await inner.aclose()

        return stream

    @functools.wraps(fn)
    async def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return await fn(*args, **kwargs)
        except A2AError:
            raise
        except Exception as exc:
            raise _clean(exc, name) from None

    return call


def database_guard(cls: T) -> T:
    """Wrap every `on_*` request method of an A2A request handler (JSON-RPC and REST)."""
    for name, fn in list(vars(cls).items()):
        if name.startswith("on_") and (
            inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn)
        ):
            setattr(cls, name, _guard(name, fn))
    return cls
