"""Typed JSON errors of the operator API: `{"error": {"type": ..., "message": ...}}`.
Every refusal is raised before anything changes."""

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException


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
    first = exc.errors()[0] if exc.errors() else {}
    where = ".".join(str(p) for p in first.get("loc", ()))
    return error_json(400, "invalid_request", f"{where}: {first.get('msg', 'invalid')}")


async def _http(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    kind = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
    return error_json(exc.status_code, kind, str(exc.detail), exc.headers)


def install(app: FastAPI) -> None:
    app.add_exception_handler(OpsError, _ops)
    app.add_exception_handler(RequestValidationError, _invalid)
    app.add_exception_handler(HTTPException, _http)


# Shown in the OpenAPI document for every route that can refuse.
RESPONSES: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut} for code in (400, 401, 403, 404, 409, 413)
}
