"""Typed JSON errors of the operator API: `{"error": {"type": ..., "message": ...}}`.
Every refusal is raised before anything changes."""

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from sqlalchemy.exc import SQLAlchemyError
from starlette.exceptions import HTTPException
from temporalio.service import RPCError

from agentrt.contracts.errors import AgentRuntimeError, UnknownFieldsError
from agentrt.contracts.strict import UNKNOWN_KEYS
from agentrt.core.temporal import connection_lost
from agentrt.store.db.engine import DATABASE_ERRORS, database_reason

logger = logging.getLogger("agentrt.api")


class ErrorBody(BaseModel):
    type: str
    message: str


class ErrorOut(BaseModel):
    error: ErrorBody


class OpsError(Exception):
    def __init__(
        self, status: int, type_: str, message: str, headers: dict[str, str] | None = None
    ):
        super().__init__(message)
        self.status, self.type, self.message, self.headers = status, type_, message, headers


def unauthorized(message: str) -> OpsError:
    return OpsError(401, "unauthorized", message, {"WWW-Authenticate": 'Bearer realm="agentrt"'})


def forbidden(message: str) -> OpsError:
    return OpsError(403, "forbidden", message)


def not_granted(message: str) -> OpsError:
    return OpsError(403, "profile_not_granted", message)


def not_found(run_id: str) -> OpsError:
    return OpsError(404, "run_not_found", f"no run {run_id}")


def conflict(type_: str, message: str) -> OpsError:
    return OpsError(409, type_, message)


def bad_request(type_: str, message: str) -> OpsError:
    return OpsError(400, type_, message)


def error_json(status: int, type_: str, message: str, headers: Any = None) -> JSONResponse:
    body = {"error": {"type": type_, "message": message}}
    return JSONResponse(body, status_code=status, headers=headers)


async def _ops(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, OpsError)
    return error_json(exc.status, exc.type, exc.message, exc.headers)


async def _invalid(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    unknown = [e for e in exc.errors() if e.get("type") == UNKNOWN_KEYS]
    if unknown:  # named with the closest known field (contracts/strict.py)
        return error_json(422, UnknownFieldsError.code, unknown[0]["msg"])
    first = exc.errors()[0] if exc.errors() else {}
    where = ".".join(str(p) for p in first.get("loc", ()))
    return error_json(400, "invalid_request", f"{where}: {first.get('msg', 'invalid')}")


async def _http(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    kind = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
    return error_json(exc.status_code, kind, str(exc.detail), exc.headers)


# What a route did not refuse itself: the runtime's typed errors, each its status under its
# class's wire code (contracts/errors.py), the nearest listed class of its own deciding.
# Outages are 503 with Retry-After; whatever else is left is a 500, typed all the same.
_STATUS: dict[str, int] = {
    "busy": 503,
    "no_worker": 503,
    "temporal_unavailable": 503,
    "store_unavailable": 503,
    "unknown_profile": 400,
    "payload_keys_required": 409,
    "prompt_too_long": 413,
    "unknown_fields": 422,
    "invalid_request": 400,
    "reason_required": 400,
    "run_not_begun": 409,
    "run_not_found": 404,
    "schedule_exists": 409,
    "schedule_not_found": 404,
}
_RETRY_LATER = {"Retry-After": "1"}
# Workers that poll but began no run within the start bound are saturated: a new start
# sent at once would only add to their backlog.
_RETRY_BUSY = {"Retry-After": "5"}
# The outages' own messages may name a host: the operator reads them in the log, callers
# of this API (not its operators) read these.
OUTAGE_MESSAGE = {
    "temporal_unavailable": "Temporal did not answer: try again",
    "store_unavailable": "the database could not serve this: try again",
}


def _unavailable(type_: str, message: str) -> JSONResponse:
    return error_json(503, type_, message, _RETRY_LATER)


async def _runtime(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, AgentRuntimeError)
    for cls in type(exc).__mro__:
        kind = getattr(cls, "code", "")
        if kind not in _STATUS:
            continue
        if kind in OUTAGE_MESSAGE:
            logger.warning("%s: %s", kind, exc)
            return _unavailable(kind, OUTAGE_MESSAGE[kind])
        status = _STATUS[kind]
        later = _RETRY_BUSY if kind == "busy" else _RETRY_LATER
        return error_json(status, kind, str(exc), later if status == 503 else None)
    return error_json(500, AgentRuntimeError.code, str(exc))


async def _temporal(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RPCError)
    if connection_lost(exc):
        # No address in the text: callers of this API are not its operators.
        logger.warning("temporal_unavailable: %s", exc.message)
        return _unavailable("temporal_unavailable", OUTAGE_MESSAGE["temporal_unavailable"])
    return error_json(502, "temporal_refused", f"Temporal refused the call: {exc.message}")


async def _database(_request: Request, exc: Exception) -> JSONResponse:
    """The database could not serve the request (gone, refused, locked, or not migrated):
    a 503 to the caller, the cause in one line of the log for the operator."""
    logger.warning("store_unavailable: %s", database_reason(exc))
    return _unavailable("store_unavailable", OUTAGE_MESSAGE["store_unavailable"])


async def _refused_by_database(_request: Request, exc: Exception) -> JSONResponse:
    """The database refused the statement itself (bad data, a constraint): a defect or
    input a check missed. A 500 naming no statement; the log line names the error's kind
    and the driver's first line, never the SQL or its parameters (no traceback either)."""
    logger.error("store_error: %s", database_reason(exc))
    return error_json(500, "store_error", "the database refused this request")


def install(app: FastAPI) -> None:
    app.add_exception_handler(OpsError, _ops)
    app.add_exception_handler(RequestValidationError, _invalid)
    app.add_exception_handler(HTTPException, _http)
    app.add_exception_handler(AgentRuntimeError, _runtime)
    app.add_exception_handler(RPCError, _temporal)
    for away in DATABASE_ERRORS:
        app.add_exception_handler(away, _database)
    app.add_exception_handler(SQLAlchemyError, _refused_by_database)


# Shown in the OpenAPI document for every route that can refuse.
RESPONSES: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut} for code in (400, 401, 403, 404, 409, 413, 422, 503)
}
