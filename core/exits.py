"""Ending a process that may hold a Temporal client."""

import contextlib
import os
import sys
from collections.abc import Callable
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


def console_script(body: Callable[[], None]) -> NoReturn:
    """Run a console script's body and end the process with its exit code through
    `exit_now` (a SystemExit's code, or 0)."""
    try:
        body()
    except SystemExit as done:
        exit_now(done.code if isinstance(done.code, int) else (0 if done.code is None else 2))
    exit_now(0)
