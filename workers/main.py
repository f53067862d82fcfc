"""The worker process: `agentrt-worker` / `python -m workers`. Runs until SIGTERM/SIGINT,
then stops polling and lets in-flight activities finish (graceful drain)."""

import argparse
import asyncio
import logging
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from pydantic import ValidationError
from sqlalchemy.exc import SQLAlchemyError

from agentrt.activities.toolbox.mcp_config import load_mcp_config
from agentrt.contracts.errors import AgentRuntimeError
from agentrt.core.exits import console_script, exit_now
from agentrt.core.logs import configure_logging
from agentrt.core.settings import Settings
from agentrt.core.settings_doc import help_text
from agentrt.core.settings_env import refuse_unknown
from agentrt.core.temporal import connect
from agentrt.store.db.open import WHICH_SETTING
from agentrt.workers.builder import make_worker, sandbox_runner, stock_worker
from agentrt.workers.plugin import AgentrtPlugin
from agentrt.workers.preflight import check
from agentrt.workers.tool_list import list_tools

__all__ = ["main", "make_worker", "sandbox_runner", "serve"]  # make_worker: its former home

logger = logging.getLogger("workers")


async def serve(settings: Settings, stop: asyncio.Event) -> None:
    """The stock worker: the plugin (its configuration read, nothing opened), a client
    given it, and one Worker; the plugin opens the rest when the worker runs."""
    plugin = AgentrtPlugin(settings)
    client = await connect(settings, plugins=[plugin])
    worker = stock_worker(client, plugin)
    running = asyncio.ensure_future(worker.run())
    stopping = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({running, stopping}, return_when=asyncio.FIRST_COMPLETED)
        if not running.done():
            logger.info("draining")
            await worker.shutdown()
        await running  # the worker's own failure (a schema behind, a port taken) is raised
    finally:
        stopping.cancel()


EXIT_ERROR = 2
# Every setting the worker reads, made from the settings classes (core/settings_doc.py).
SETTINGS_HELP = help_text(
    Settings.groups(), "settings (environment, or a .env file in the working directory):"
)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="agentrt-worker",
        description="Run an agentrt worker: it polls its task queue for agent runs (and the "
        "routed queues AGENTRT_SERVE names) and, on SIGTERM or SIGINT, stops polling and "
        "drains in-flight work. It never migrates the database: run `agentrt migrate` first.",
        epilog=SETTINGS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--task-queue", metavar="QUEUE", help="poll this queue (overrides AGENTRT_TASK_QUEUE)"
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="run every check the worker runs at start (settings, profiles against the tools "
        "of the toolboxes and MCP servers, providers, prices, database, Temporal), print what "
        "was found (the tools with their effects, the providers, the MCP servers) and exit: "
        "0 when the worker would start, 2 with the reason when it would refuse; changes nothing",
    )
    parser.add_argument(
        "--list-tools",
        action="store_true",
        help="list every tool this worker would load (effect, where it came from, whether "
        "approval binds it per profile, its reconcile probe) and exit; changes nothing",
    )
    parser.add_argument(
        "--log-level",
        default="INFO",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="log level (INFO)",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    """The console script. Every expected failure (bad settings, Temporal or the database
    unreachable) is one line on stderr naming what to change, and exit code 2. As the
    console script (argv None) it ends the process itself: a Temporal client may exist, and
    interpreter teardown could turn the exit code into SIGABRT (see `exit_now`)."""
    if argv is not None:
        return _main(argv)
    console_script(lambda: _main(None))


def _main(argv: Sequence[str] | None) -> None:
    args = parse_args(argv)
    configure_logging(args.log_level)
    try:
        settings = Settings()
    except ValidationError as exc:
        e = exc.errors()[0]
        where = ".".join(str(p) for p in e["loc"])
        _fail(f"invalid AGENTRT_* settings: {where}: {e['msg']}")
    try:
        refuse_unknown(os.environ, Path(".env"), settings)
    except AgentRuntimeError as exc:
        _fail(str(exc))
    configure_logging(args.log_level, settings.telemetry.log_format)
    # The SDK's own start and shutdown lines: this worker says "polling" and "draining"
    # itself, and a start it refuses is one line on stderr.
    logging.getLogger("temporalio.worker").setLevel(max(logging.WARNING, logging.root.level))
    if args.task_queue is not None:
        if not args.task_queue.strip():
            _fail("--task-queue must not be empty")
        settings = settings.replace(temporal={"task_queue": args.task_queue.strip()})

    try:  # routing and versioning settings fail here, before any connection
        settings.temporal.deployment_version()
        settings.worker.serves()
        settings.worker.toolbox_queue_map()
        settings.worker.rate_limits()
    except AgentRuntimeError as exc:
        _fail(str(exc))

    async def _check() -> None:
        await check(settings, _say)

    async def _list_tools() -> None:
        mcp = (
            load_mcp_config(settings.worker.mcp_servers_file)
            if settings.worker.mcp_servers_file
            else None
        )
        await list_tools(settings, mcp, _say)

    async def _run() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        await serve(settings, stop)

    try:
        asyncio.run(_check() if args.check else _list_tools() if args.list_tools else _run())
    except AgentRuntimeError as exc:
        _fail(str(exc))
    except SQLAlchemyError as exc:  # e.g. a database that refuses the worker
        _fail(f"database error: {str(exc).splitlines()[0]}; {WHICH_SETTING}")
    if args.check or args.list_tools:
        exit_now(0)


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _fail(message: str) -> NoReturn:
    sys.stderr.write(f"agentrt-worker: {message}\n")
    sys.stderr.flush()
    raise SystemExit(EXIT_ERROR)


if __name__ == "__main__":
    main()
