"""Ending a process that may hold a Temporal client."""

import contextlib
import os
import sys
from typing import NoReturn


def exit_now(code: int) -> NoReturn:
    """Leave without interpreter teardown: the Temporal client's Rust threads can abort
    CPython's finalization of a short-lived process (`PyGILState_Release`, temporalio
    sdk-python#300), turning a clean exit code into SIGABRT. Everything the caller started
    is already stopped; flush and go."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)
