"""`agentrt schedules create|list|show|pause|resume|trigger|backfill|delete`: schedules of
runs (starter/scheduling.py), beside `schedules apply` (the retention Schedule). Bad input
fails before any connection is made; typed errors propagate to the CLI (exit 2)."""

import argparse
import getpass
import json
from datetime import datetime

from rich.console import Console

from agentrt.contracts.errors import InvalidRequestError
from agentrt.contracts.schedules import ScheduleRequest, ScheduleView
from agentrt.core.settings import Settings
from agentrt.core.settings_api import RemoteSettings
from agentrt.starter.commands import EXIT_OK, name_arg, session
from agentrt.starter.remote import api_session
from agentrt.starter.remote_schedules import ApiSchedules
from agentrt.starter.scheduling import RunSchedules

OVERLAPS = ("skip", "buffer_one", "buffer_all", "cancel_other", "terminate_other", "allow_all")


def add_parsers(verbs: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    create = verbs.add_parser("create", help="schedule runs of a profile on a prompt")
    create.add_argument("name", metavar="NAME", help="the schedule's name (its Temporal id)")
    create.add_argument("profile", metavar="PROFILE", help="the agent profile each fire runs")
    create.add_argument("prompt", metavar="PROMPT", help="the user's message of each run")
    when = create.add_mutually_exclusive_group(required=True)
    when.add_argument("--cron", default=None, help="a cron expression ('0 7 * * 1-5')")
    when.add_argument("--every", default=None, help="an interval: 30s, 5m, 2h, 1d")
    create.add_argument("--overlap", choices=OVERLAPS, default="skip",
                        help="a fire due while the last run runs (default: skip it)")  # fmt: skip
    create.add_argument("--paused", action="store_true", help="create it paused")
    create.add_argument("--max-iterations", type=int, default=None, metavar="N",
                        help="rounds before each must answer (default: the profile's)")  # fmt: skip
    create.add_argument("--note", default=None, help="shown beside it in Temporal Web")
    create.add_argument("--initiator", default=None, help="who creates it (default: OS user)")
    listing = verbs.add_parser("list", help="the schedules of runs")
    listing.add_argument("--json", action="store_true", help="one JSON object per line")
    for verb, what in (
        ("show", "show a schedule of runs"),
        ("pause", "pause a schedule (no fire until resumed)"),
        ("resume", "resume a paused schedule"),
        ("trigger", "fire a schedule once now"),
        ("delete", "delete a schedule (its runs go on)"),
        ("backfill", "fire what the schedule would have fired between two times"),
    ):
        cmd = verbs.add_parser(verb, help=what)
        cmd.add_argument("name", metavar="NAME", help="the schedule's name")
        if verb == "show":
            cmd.add_argument("--json", action="store_true", help="print it as JSON")
        if verb in ("pause", "resume"):
            cmd.add_argument("--by", default=None, help="who (default: OS user)")
        if verb == "backfill":
            cmd.add_argument("--start", required=True, help="ISO 8601 time, with its zone")
            cmd.add_argument("--end", required=True, help="ISO 8601 time, with its zone")


def create_arg(args: argparse.Namespace, settings: Settings) -> ScheduleRequest:
    fields = {
        "name": args.name, "profile": args.profile, "prompt": args.prompt,
        "cron": args.cron, "every": args.every, "overlap": args.overlap,
        "paused": args.paused, "max_iterations": args.max_iterations, "note": args.note,
    }  # fmt: skip
    return ScheduleRequest.checked(
        settings.limits.max_prompt_chars,
        fields,
        max_iterations_ceiling=settings.limits.max_iterations_ceiling,
    )


def time_arg(raw: str, option: str) -> datetime:
    try:
        at = datetime.fromisoformat(raw)
    except ValueError:
        raise InvalidRequestError(f"{option} {raw!r} is not an ISO 8601 time") from None
    if at.tzinfo is None:
        raise InvalidRequestError(f"{option} {raw!r} names no time zone (add Z or +02:00)")
    return at


async def run(args: argparse.Namespace, settings: Settings, out: Console) -> int:
    """One `schedules` verb, through the operator API with --api (or AGENTRT_API_URL) as
    the token's principal, else with the deployment's own client as --initiator/--by."""
    verb = args.schedules_command
    request = create_arg(args, settings) if verb == "create" else None  # before connecting
    span = None
    if verb == "backfill":
        span = (time_arg(args.start, "--start"), time_arg(args.end, "--end"))
    remote_settings = RemoteSettings()
    api_url = args.api or remote_settings.api_url
    if api_url:
        token = args.token or (
            remote_settings.api_token.get_secret_value() if remote_settings.api_token else None
        )
        async with api_session(api_url, token) as api:
            return await _act(ApiSchedules(api), args, request, span, _who(args), out)
    default_who(args)
    async with session(settings) as (runtime, _client):
        return await _act(RunSchedules(runtime), args, request, span, _who(args), out)


def _who(args: argparse.Namespace) -> str:
    who = getattr(args, "initiator", None) or getattr(args, "by", None)
    return "" if who is None else name_arg(who, "--initiator / --by")


async def _act(
    schedules: RunSchedules | ApiSchedules,
    args: argparse.Namespace,
    request: ScheduleRequest | None,
    span: tuple[datetime, datetime] | None,
    who: str,
    out: Console,
) -> int:
    verb = args.schedules_command
    if request is not None:
        _print(out, await schedules.create(request, created_by=who), as_json=False)
    elif verb == "list":
        for view in await schedules.list():
            _print(out, view, as_json=args.json)
    elif verb == "show":
        _print(out, await schedules.get(args.name), as_json=args.json)
    elif verb in ("pause", "resume"):
        act = schedules.pause if verb == "pause" else schedules.resume
        await act(args.name, by=who)
        _say(out, f"schedule {args.name} {verb}d")
    elif verb == "trigger":
        await schedules.trigger(args.name)
        _say(out, f"schedule {args.name} triggered")
    elif verb == "backfill" and span is not None:
        await schedules.backfill(args.name, *span)
        _say(out, f"schedule {args.name} backfilled from {span[0]} to {span[1]}")
    elif verb == "delete":
        await schedules.delete(args.name)
        _say(out, f"schedule {args.name} deleted; its runs go on")
    return EXIT_OK


def default_who(args: argparse.Namespace) -> None:
    """The OS user where --initiator or --by was not given."""
    for option in ("initiator", "by"):
        if hasattr(args, option) and getattr(args, option) is None:
            setattr(args, option, getpass.getuser())


def _say(out: Console, line: str) -> None:
    out.print(line, markup=False, highlight=False, soft_wrap=True)


def _print(out: Console, view: ScheduleView, *, as_json: bool) -> None:
    if as_json:
        _say(out, json.dumps(view.model_dump(mode="json")))
        return
    state = "paused" if view.paused else "active"
    upcoming = view.next_fires[0].isoformat() if view.next_fires else "-"
    _say(
        out,
        f"{view.name}\t{view.profile}\t{view.spec}\toverlap {view.overlap}\t{state}\t"
        f"by {view.created_by}\tnext {upcoming}\truns {len(view.recent_runs)}",
    )
