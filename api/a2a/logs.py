"""The A2A SDK logs some bad requests with `logger.exception`: a body that is JSON but not
a JSON-RPC request, or params that do not parse. Those are the client's mistakes, already
answered with a typed JSON-RPC error; they are logged here as one line, with the reason
and without the traceback. Anything else the SDK logs keeps its traceback.

It also logs every request's whole body at DEBUG (`Request body: ...`): the prompt, a push
config's URL, token and credentials. That line is dropped, at every level."""

import logging

SDK_DISPATCHER = "a2a.server.routes.jsonrpc_dispatcher"
BAD_INPUT = ("Failed to validate base JSON-RPC request", "Failed to parse request params")
WHOLE_BODY = "Request body: %s"


class OneLineBadInput(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg == WHOLE_BODY:
            return False
        if record.exc_info and record.msg in BAD_INPUT:
            exc = record.exc_info[1]
            reason = f"{type(exc).__name__}: {exc}".splitlines()[0][:200] if exc else ""
            record.msg, record.args = f"{record.msg} ({reason})", None
            record.levelno, record.levelname = logging.INFO, "INFO"
            record.exc_info, record.exc_text = None, None
        return True


def install() -> None:
    """Idempotent: one filter on the SDK's dispatcher logger, however many apps are built."""
    logger = logging.getLogger(SDK_DISPATCHER)
    if not any(isinstance(f, OneLineBadInput) for f in logger.filters):
        logger.addFilter(OneLineBadInput())
