"""`agentrt`: the command line. Settings come from the environment (AGENTRT_*) and are read
here only; typed errors become one line on stderr and exit code 2, never a traceback."""

import argparse
import asyncio
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TypeAlias

from pydantic import ValidationError
from rich.console import Console
from rich.text import Text
from sqlalchemy.exc import SQLAlchemyError
from temporalio.client import WorkflowFailureError
from temporalio.service import RPCError

from agentrt.contracts.approval import REASON_REQUIRED, reason_missing
from agentrt.contracts.errors import (
    AgentRuntimeError,
    ConfigError,
    InvalidRequestError,
    ReasonRequiredError,
    StoreUnavailableError,
)
from agentrt.core.exits import exit_now
from agentrt.core.logs import configure_logging
from agentrt.core.settings import Settings
from agentrt.core.settings_api import RemoteSettings
from agentrt.core.settings_env import refuse_unknown
from agentrt.core.temporal import call_error
from agentrt.core.tracing import configure_tracing, shutdown_tracing
from agentrt.starter import (
    commands,
    deployment_cmd,
    policies_cmd,
    reconcile_cmd,
    remote,
    schedules_cmd,
)
from agentrt.store.db.sealing import SealError

EXIT_ERROR, EXIT_INTERRUPTED = 2, 130
# What `add_subparsers` returns: each command adds its own parser to it.
_Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="agentrt", description="Durable AI agent runs on Temporal.")
    p.add_argument(
        "--api",
        default=None,
        metavar="URL",
        help="run, start, status, budget, events, inbox, approve, deny, cancel, reconcile and "
        "the schedules of runs through the operator API at URL, as the principal of --token "
        "(default: AGENTRT_API_URL)",
    )
    p.add_argument("--token", default=None, help="operator API token (default: AGENTRT_API_TOKEN)")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    # The order here is the order `agentrt --help` lists the commands in.
    _add_run_and_start(sub)
    _add_status_and_events(sub)
    _add_decisions(sub)
    _add_cancel(sub)
    reconcile_cmd.add_parser(sub)
    policies_cmd.add_parser(sub)
    inbox = sub.add_parser("inbox", help="runs waiting for approval, oldest first")
    inbox.add_argument("--json", action="store_true", help="print the inbox as JSON")
    _add_demo(sub)
    _add_operations(sub)
    return p


def _add_run_and_start(sub: _Commands) -> None:
    run = sub.add_parser("run", help="start a run and wait for its outcome")
    start = sub.add_parser("start", help="start a run and print its uuid")
    for cmd in (run, start):
        cmd.add_argument("profile", metavar="PROFILE", help="the agent profile to run")
        cmd.add_argument("prompt", metavar="PROMPT", help="the user's message")
        cmd.add_argument("--max-iterations", type=int, default=None, metavar="N",
                         help="rounds before it must answer (default: the profile's)")  # fmt: skip
        cmd.add_argument("--initiator", default=None, help="who starts it (default: OS user)")
    start.add_argument(
        "--accepted", dest="wait", action="store_const", const="accepted", default="begun",
        help="return once Temporal holds the run (status STARTING), not once a worker began it",
    )  # fmt: skip
    run.set_defaults(wait="begun")
    run.add_argument(
        "--no-stream",
        action="store_true",
        help="do not print the model's text as it is written (on a terminal it is)",
    )


def _add_status_and_events(sub: _Commands) -> None:
    status = sub.add_parser("status", help="show a run")
    status.add_argument("run_id", metavar="RUN_ID", help="the run's uuid")
    status.add_argument("--json", action="store_true", help="print the run as JSON")

    budget = sub.add_parser("budget", help="show a run's budget: spent, reserved, room left")
    budget.add_argument("run_id", metavar="RUN_ID", help="the run's uuid")
    budget.add_argument("--json", action="store_true", help="print it as JSON")

    events = sub.add_parser("events", help="print a run's events")
    events.add_argument("run_id", metavar="RUN_ID", help="the run's uuid")
    events.add_argument(
        "--after", type=int, default=-1, metavar="N", help="after the event at position N"
    )
    events.add_argument("--follow", action="store_true", help="poll until the run ends")
    events.add_argument("--json", action="store_true", help="one JSON object per line")


def _add_decisions(sub: _Commands) -> None:
    for name, verb in (("approve", "approve"), ("deny", "deny")):
        d = sub.add_parser(name, help=f"{verb} the pending turn of a waiting run")
        d.add_argument("run_id", metavar="RUN_ID", help="the waiting run's uuid")
        d.add_argument("--by", default=None, metavar="NAME", help="who decides (not with --api)")
        d.add_argument("--digest", default=None, metavar="D", help="turn digest (default: current)")
        needed = " (required to deny)" if name == "deny" else ""
        d.add_argument(
            "--reason", default=None, metavar="R", help=f"why, kept in the audit{needed}"
        )


def _add_cancel(sub: _Commands) -> None:
    cancel = sub.add_parser("cancel", help="cancel a run")
    cancel.add_argument("run_id", metavar="RUN_ID", help="the run's uuid")
    cancel.add_argument("--by", default=None, metavar="NAME", help="who cancels (not with --api)")
    cancel.add_argument("--reason", default=None, metavar="R", help="why, kept in its events")


def _add_demo(sub: _Commands) -> None:
    demo = sub.add_parser("demo", help="embedded Temporal dev server + worker + a demo run")
    demo.add_argument("--data-dir", type=Path, default=None, help="default: AGENTRT_DATA_DIR")
    demo.add_argument("--port", type=int, default=None, help="Temporal gRPC port (7233)")
    demo.add_argument("--ui-port", type=int, default=None, help="Temporal Web UI port (8233)")
    demo.add_argument("--interactive", action="store_true", help="ask before approving")
    demo.add_argument("--keep-running", action="store_true", help="stay up until Ctrl-C")
    demo.add_argument(
        "--team",
        action="store_true",
        help="a triage agent delegating to a child agent and to a remote A2A agent",
    )


def _add_operations(sub: _Commands) -> None:
    """The deployment's own chores: schema, schedules, the codec server."""
    sub.add_parser("migrate", help="bring the database schema to head")
    schedules = sub.add_parser(
        "schedules", help="schedules of runs, and the deployment's retention schedule"
    )
    schedules_sub = schedules.add_subparsers(dest="schedules_command", required=True)
    schedules_sub.add_parser(
        "apply", help="create or update the retention schedule (AGENTRT_RETENTION_*)"
    )
    schedules_cmd.add_parsers(schedules_sub)  # schedules of runs
    codec = sub.add_parser(
        "codec-server", help="serve /decode for Temporal Web (needs AGENTRT_PAYLOAD_KEYS)"
    )
    codec.add_argument("--port", type=int, default=8081, help="the port to serve on (8081)")
    codec.add_argument(
        "--dev-no-token",
        action="store_true",
        help="serve without AGENTRT_CODEC_TOKEN (loopback-only development)",
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns its exit code. Called without argv it is the process's
    entry point (the console script) and ends the process itself, see `exit_now`."""
    code = _main(argv)
    if argv is None:
        exit_now(code)
    return code


def _main(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    out, err = Console(), Console(stderr=True)
    try:
        settings = Settings()
    except ValidationError as exc:
        return _fail(err, ConfigError(f"invalid AGENTRT_* settings: {_first_error(exc)}"))
    try:
        refuse_unknown(os.environ, Path(".env"), settings)
    except ConfigError as exc:
        return _fail(err, exc)
    if settings.telemetry.log_format == "json":  # text: Python's default (warnings, bare) as before
        configure_logging(logging.WARNING, "json")
    try:
        tracer = configure_tracing(settings, "agentrt-cli")
    except ConfigError as exc:
        return _fail(err, exc)
    try:
        return asyncio.run(_dispatch(args, settings, out, err))
    except KeyboardInterrupt:
        err.print("interrupted; a started run goes on in Temporal", markup=False, highlight=False)
        return EXIT_INTERRUPTED
    except AgentRuntimeError as exc:
        return _fail(err, exc)
    except ValidationError as exc:
        return _fail(err, InvalidRequestError(_first_error(exc)))
    except SealError as exc:
        return _fail(err, ConfigError(f"cannot open stored content ({exc}); check the seal keys"))
    except SQLAlchemyError as exc:
        first = str(exc).splitlines()[0]
        return _fail(err, StoreUnavailableError(f"database error: {first} (try `agentrt migrate`)"))
    except WorkflowFailureError as exc:
        return _fail(err, AgentRuntimeError(f"the run's workflow failed: {exc.cause}"))
    except RPCError as exc:
        return _fail(err, call_error(exc, settings.temporal.address))
    finally:
        shutdown_tracing(tracer)  # the process ends without teardown: flush the spans now


def _fail(err: Console, exc: Exception) -> int:
    err.print(Text(f"agentrt: {exc}"), soft_wrap=True)
    return EXIT_ERROR


def _first_error(exc: ValidationError) -> str:
    e = exc.errors()[0]
    where = ".".join(str(p) for p in e["loc"])
    return f"{where}: {e['msg']}" if where else str(e["msg"])


async def _dispatch(
    args: argparse.Namespace, settings: Settings, out: Console, err: Console
) -> int:
    if args.command == "demo":
        # The demo is the one all-in-one command: it embeds a worker in this process. The
        # import stays here so every other command runs without the worker's wiring.
        from agentrt.workers import embedded

        opts = embedded.DemoOptions(
            data_dir=args.data_dir or settings.database.data_dir,
            port=args.port,
            ui_port=args.ui_port,
            interactive=args.interactive,
            keep_running=args.keep_running,
            team=args.team,
        )
        return await embedded.run_demo(settings, opts, out, err)
    if args.command == "migrate":
        return deployment_cmd.migrate(settings, out)
    if args.command == "policies":
        return await policies_cmd.dry_run(args, settings, out)
    if args.command == "schedules" and args.schedules_command == "apply":
        return await deployment_cmd.apply_schedules(settings, out)
    if args.command == "schedules":
        return await schedules_cmd.run(args, settings, out)
    if args.command == "codec-server":
        return await deployment_cmd.codec_server(
            settings, args.port, out, dev_no_token=args.dev_no_token
        )
    if getattr(args, "run_id", None) is not None:
        commands.run_id_arg(args.run_id)  # bad input fails before any connection is made
    if args.command == "deny" and reason_missing(False, args.reason):
        raise ReasonRequiredError(f"{REASON_REQUIRED} (--reason R)")
    if args.command in ("run", "start"):
        # Bad input fails before any connection is made; the command sends this request.
        args.request = commands.start_arg(args, settings)
    remote_settings = RemoteSettings()
    api_url = args.api or remote_settings.api_url
    acting = ("approve", "deny", "cancel", "reconcile")
    if not api_url and args.command in acting and args.by is None:
        raise InvalidRequestError("--by NAME is required (or use --api with a token)")
    if api_url:
        token = args.token or (
            remote_settings.api_token.get_secret_value() if remote_settings.api_token else None
        )
        async with remote.api_session(api_url, token) as api:
            return await _run(args, commands.Commands(api, None, settings, out, err))
    async with commands.session(settings) as (runtime, client):
        return await _run(args, commands.Commands(runtime, client, settings, out, err))


async def _run(args: argparse.Namespace, cmd: commands.Commands) -> int:
    out = cmd.out
    match args.command:
        case "run":
            return await cmd.run(args)
        case "start":
            out.print(await cmd.start(args), markup=False, highlight=False)
            return commands.EXIT_OK
        case "status":
            return await cmd.status(args.run_id, args.json)
        case "budget":
            return await cmd.budget(args.run_id, args.json)
        case "events":
            return await cmd.events(args.run_id, args.after, args.follow, args.json)
        case "approve" | "deny":
            return await cmd.decide(args, approved=args.command == "approve")
        case "cancel":
            return await cmd.cancel(args)
        case "reconcile":
            return await reconcile_cmd.reconcile(cmd, args)
        case "inbox":
            return await cmd.inbox(args.json)
    raise InvalidRequestError(f"unknown command {args.command}")  # argparse prevents this


if __name__ == "__main__":
    raise SystemExit(main())
