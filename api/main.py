"""`agentrt-api`: serve the A2A server and operator API (default), check what it would
start with (--check), purge runs, rotate seal keys, manage operator tokens."""

import argparse
import asyncio
import logging
import os
import sys
from datetime import timedelta
from pathlib import Path
from typing import NoReturn

from pydantic import ValidationError
from sqlalchemy.exc import SQLAlchemyError

from agentrt.api.operator import tokens
from agentrt.api.settings import ApiSettings, key_digest
from agentrt.contracts.errors import AgentRuntimeError
from agentrt.core.exits import console_script
from agentrt.core.logs import configure_logging
from agentrt.core.settings_doc import help_text
from agentrt.core.settings_env import refuse_unknown
from agentrt.store.db.open import WHICH_SETTING

EXIT_ERROR = 2


def _serve(settings: ApiSettings) -> None:
    asyncio.run(_serve_until_stopped(settings))


async def _serve_until_stopped(settings: ApiSettings) -> None:
    import uvicorn

    from agentrt.api.app import create_app
    from agentrt.api.metrics import api_registry
    from agentrt.core.metrics import install_sdk_metrics, serve_metrics
    from agentrt.core.temporal import connect
    from agentrt.core.tracing import configure_tracing, shutdown_tracing

    # The metrics ports first (a taken one is an error before anything connects); both
    # connections before the server starts, so an unreachable Temporal or database is one
    # line naming the setting, not a failed lifespan's traceback.
    registry = api_registry()
    tracer = configure_tracing(settings, "agentrt-api")
    try:
        with serve_metrics(settings, registry.registry):
            install_sdk_metrics(settings)
            client = await connect(settings)
            app = create_app(settings, client=client)
            ctx = app.state.a2a.ctx
            registry.watch(ctx)
            registry.instrument(app)
            pollers = registry.watch_queues(client, ctx, settings.temporal.task_queue)
            config = uvicorn.Config(
                app,
                host=settings.api.host,
                port=settings.api.port,
                log_config=None,
                timeout_graceful_shutdown=settings.api.shutdown_seconds,
            )
            async with pollers.running():
                await uvicorn.Server(config).serve()
    finally:
        shutdown_tracing(tracer)


def _check(settings: ApiSettings) -> None:
    from agentrt.api.preflight import check

    def say(line: str) -> None:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    asyncio.run(check(settings, say))


def _purge(settings: ApiSettings, run_ids: list[str], older_than_days: float | None) -> int:
    from agentrt.contracts.errors import ConfigError
    from agentrt.store.a2a.purge import purge_runs, purge_terminal_before
    from agentrt.store.db.context import utcnow
    from agentrt.store.db.open import open_store
    from agentrt.store.db.sealing import Sealer

    try:
        sealer = Sealer.from_b64(settings.read_seal_keys())
    except ValueError as exc:
        raise ConfigError(f"AGENTRT_SEAL_KEYS: {exc}") from None
    engine, ctx = open_store(settings.database.resolved_url(), sealer, run_migrations=False)
    try:
        removed = purge_runs(ctx, run_ids) if run_ids else 0
        if older_than_days is not None:
            removed += purge_terminal_before(ctx, utcnow() - timedelta(days=older_than_days))
    finally:
        engine.dispose()
    return removed


def main(argv: list[str] | None = None) -> None:
    """The console script (argv None) ends the process itself: a Temporal client may exist,
    and interpreter teardown could turn the exit code into SIGABRT (see `exit_now`)."""
    if argv is not None:
        return _main(argv)
    console_script(lambda: _main(None))


# What `serve` reads, made from the settings classes (core/settings_doc.py): the process's
# own groups first, then those it shares with the worker.
_SERVED = ("api", "push", "temporal", "database", "privacy", "telemetry", "limits")
SERVE_SETTINGS = help_text(
    sorted(
        ((n, g) for n, g in ApiSettings.groups() if n in _SERVED), key=lambda p: _SERVED.index(p[0])
    ),
    "settings (environment, or a .env file in the working directory; see the Settings page):",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agentrt-api", description=__doc__)
    parser.add_argument(
        "--check",
        action="store_true",
        help="check what `serve` would start with (seal keys, A2A keys and grants, operator "
        "tokens, payload keys, the codec, the database, TLS to Temporal and the namespace), "
        "print one line each and exit: 0 when it would start, 2 with the reason when it "
        "would refuse; starts no server and changes nothing",
    )
    sub = parser.add_subparsers(dest="command")
    sub.add_parser(
        "serve",
        help="serve A2A over JSON-RPC (the default)",
        description="Serve the operator API, its approvals page and A2A over JSON-RPC "
        "until SIGTERM or SIGINT, then drain open requests.",
        epilog=SERVE_SETTINGS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    purge = sub.add_parser("purge", help="remove runs with their A2A tasks and journals")
    purge.add_argument("run_ids", nargs="*", help="run uuids to remove")
    purge.add_argument("--older-than-days", type=float, help="settled runs finished before")
    hasher = sub.add_parser("hash-key", help="print the SHA-256 digest of an API key")
    hasher.add_argument("key", help="the API key (its digest goes in AGENTRT_API_KEYS)")
    sub.add_parser("rotate", help="re-seal every sealed column under the active key")
    tokens.add_parser(sub)
    return parser


def _main(argv: list[str] | None) -> None:
    configure_logging(logging.INFO)
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        _dispatch(parser, args)
    except ValidationError as exc:
        e = exc.errors()[0]
        _fail(f"invalid AGENTRT_* settings: {'.'.join(str(p) for p in e['loc'])}: {e['msg']}")
    except AgentRuntimeError as exc:
        _fail(str(exc))
    except SQLAlchemyError as exc:
        _fail(f"database error: {str(exc).splitlines()[0]}; {WHICH_SETTING}")
    sys.exit(0)


def _fail(message: str) -> NoReturn:
    sys.stderr.write(f"agentrt-api: {message}\n")
    sys.exit(EXIT_ERROR)


def _dispatch(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    settings = ApiSettings()
    refuse_unknown(os.environ, Path(".env"), settings)
    configure_logging(logging.INFO, settings.telemetry.log_format)
    if args.check:
        if args.command not in (None, "serve"):
            parser.error("--check checks what `serve` would start with: name no other command")
        _check(settings)
    elif args.command in (None, "serve"):
        _serve(settings)
    elif args.command == "purge":
        if not args.run_ids and args.older_than_days is None:
            parser.error("name run ids or --older-than-days")
        removed = _purge(settings, args.run_ids, args.older_than_days)
        sys.stdout.write(f"removed {removed} run(s)\n")
    elif args.command == "hash-key":
        sys.stdout.write(key_digest(args.key) + "\n")
    elif args.command == "rotate":
        from agentrt.store.security.rotate import main as rotate_main

        rotate_main([])
    elif args.command == "token":
        sys.exit(tokens.run(settings, args))


if __name__ == "__main__":
    main()
