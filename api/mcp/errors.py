"""What an MCP client is told when a call is refused or fails: a JSON-RPC error whose
`data.type` is the operator API's error type for the same case, and whose message says what
to change. As on the operator API, nothing carries SQL, a host or a traceback: outages
say "try again" and the cause goes to this process's log."""

import logging

from mcp.shared.exceptions import MCPError
from mcp.types import INTERNAL_ERROR, INVALID_PARAMS
from sqlalchemy.exc import SQLAlchemyError
from temporalio.service import RPCError

from agentrt.api.operator.errors import OUTAGE_MESSAGE, OpsError
from agentrt.contracts.errors import AgentRuntimeError
from agentrt.core.temporal import connection_lost
from agentrt.store.db.engine import DATABASE_ERRORS, database_reason

logger = logging.getLogger("agentrt.api.mcp")

# Server-defined codes (JSON-RPC keeps -32000..-32099 for them).
FORBIDDEN = -32003  # the token may not do this (its scopes, its grants)
UNAVAILABLE = -32004  # try again: Temporal, the database or the workers are away
_OUTAGES = ("temporal_unavailable", "store_unavailable", "no_worker", "busy", "schema_behind")
_INVALID = (
    "invalid_request", "unknown_fields", "prompt_too_long", "unknown_profile",
    "run_id_taken", "run_not_found", "unknown_tool",
)  # fmt: skip


def refused(type_: str, message: str) -> MCPError:
    """A refusal of `type_` (an operator API error type) with its message."""
    if type_ in _OUTAGES:
        code = UNAVAILABLE
    elif type_ in _INVALID:
        code = INVALID_PARAMS
    elif type_ in ("forbidden", "profile_not_granted", "unauthorized"):
        code = FORBIDDEN
    else:
        code = INTERNAL_ERROR
    return MCPError(code, message, {"type": type_})


def mcp_error(exc: Exception) -> MCPError:
    """`exc`, raised while serving a call, as the client sees it."""
    if isinstance(exc, MCPError):
        return exc
    if isinstance(exc, OpsError):
        return refused(exc.type, exc.message)
    if isinstance(exc, AgentRuntimeError):
        kind = getattr(exc, "code", AgentRuntimeError.code)
        if kind in OUTAGE_MESSAGE:
            logger.warning("%s: %s", kind, exc)
            return refused(kind, OUTAGE_MESSAGE[kind])
        if kind in _OUTAGES or kind in _INVALID:
            return refused(kind, str(exc))
        logger.warning("MCP call refused: %s", kind)
        return refused(kind, "the runtime refused this call")
    if isinstance(exc, RPCError):
        logger.warning("temporal_unavailable: %s", exc.message)
        if connection_lost(exc):
            return refused("temporal_unavailable", OUTAGE_MESSAGE["temporal_unavailable"])
        return refused("temporal_refused", "Temporal refused the call")
    if isinstance(exc, DATABASE_ERRORS):
        logger.warning("store_unavailable: %s", database_reason(exc))
        return refused("store_unavailable", OUTAGE_MESSAGE["store_unavailable"])
    if isinstance(exc, SQLAlchemyError):
        logger.error("store_error: %s", database_reason(exc))
        return refused("store_error", "the database refused this request")
    logger.error("MCP call failed: %s", type(exc).__name__, exc_info=exc)
    return refused("internal_error", "the call failed inside the server")
