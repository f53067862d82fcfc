"""The client-side commands of `agentrt`: each talks to Temporal and the store through the
facade, prints with rich, and returns an exit code (typed errors propagate to the CLI)."""

import argparse
import asyncio
import getpass
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

from pydantic import BaseModel
from rich.console import Console
from temporalio.client import Client

from agentrt.contracts.approval import PendingApproval
from agentrt.contracts.enums import RunStatus
from agentrt.contracts.errors import (
    InvalidRequestError,
    RunNotAwaitingApprovalError,
    RunNotBegunError,
    UnknownProfileError,
)
from agentrt.contracts.start import StartRequest
from agentrt.contracts.views import EventView, RunView
from agentrt.core.settings import Settings
from agentrt.starter import render
from agentrt.starter.client import RuntimeClient
from agentrt.starter.facade import AgentRuntime
from agentrt.starter.live import watched
from agentrt.starter.remote import ApiRuntime

EXIT_OK, EXIT_NOT_COMPLETED = 0, 1
FOLLOW_POLL_SECONDS = 0.5


def run_id_arg(raw: str) -> str:
    try:
        return str(uuid.UUID(raw))
    except ValueError:
        raise InvalidRequestError(f"run id {raw!r} is not a uuid") from None


def start_arg(args: argparse.Namespace, settings: Settings) -> StartRequest:
    """The start `run` and `start` ask for, validated before any connection is made: bad
    input (a prompt over the cap too) fails in one line with exit 2."""
    fields = {"profile": args.profile, "prompt": args.prompt}
    return StartRequest.checked(
        settings.limits.max_prompt_chars,
        {**fields, "max_iterations": args.max_iterations},
        max_iterations_ceiling=settings.limits.max_iterations_ceiling,
    )


def name_arg(raw: str, option: str) -> str:
    name = raw.strip()
    if not name or len(name) > 200:
        raise InvalidRequestError(f"{option} must be a name of 1 to 200 characters")
    return name


@asynccontextmanager
async def session(settings: Settings) -> AsyncIterator[tuple[AgentRuntime, Client]]:
    # The worker owns the schema and the seal key; a client only reads and starts runs, so
    # it creates neither (nor `./.agentrt/`) and says which setting to change instead.
    async with await AgentRuntime.connect(settings) as runtime:
        yield runtime, runtime.client


@dataclass
class Commands:
    runtime: RuntimeClient
    client: Client | None  # None through the operator API (`--api`)
    settings: Settings
    out: Console
    err: Console

    @property
    def remote(self) -> bool:
        return isinstance(self.runtime, ApiRuntime)

    def actor(self, args: argparse.Namespace) -> str:
        """Who acts: `--by` locally; through the API the token's principal, never a flag."""
        if self.remote:
            if args.by is not None:
                raise InvalidRequestError("with --api the token's principal acts; drop --by")
            return "the token's principal"
        if args.by is None:
            raise InvalidRequestError("--by NAME is required (or use --api with a token)")
        return name_arg(args.by, "--by")

    async def start(self, args: argparse.Namespace) -> str:
        request: StartRequest = args.request  # validated by start_arg before connecting
        if self.remote:
            if args.initiator is not None:
                raise InvalidRequestError("with --api the token's principal starts the run")
            return await self.runtime.submit(request, wait=args.wait)
        if args.initiator is not None:
            initiator = name_arg(args.initiator, "--initiator")
        else:
            try:
                initiator = getpass.getuser()
            except (OSError, KeyError):  # no login name, e.g. an anonymous container user
                initiator = "anonymous"
        return await self.runtime.submit(request, initiator=initiator, wait=args.wait)

    async def run(self, args: argparse.Namespace) -> int:
        run_id = await self.start(args)
        self.err.print(f"run {run_id} started", markup=False, highlight=False)

        by = "" if self.remote else " --by NAME"

        async def announce(view: RunView, pending: PendingApproval) -> None:
            render.print_pending(self.err, pending, view.call_effects)
            self.err.print(
                f"waiting: agentrt approve {run_id}{by}  (or deny / cancel)",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )

        streaming = self.out.is_terminal and not args.no_stream
        try:
            view = await watched(self.runtime, run_id, self.out, self.err, announce, streaming)
        except UnknownProfileError:
            # The workflow's error names the failure, not the profile; we know the profile.
            raise UnknownProfileError(
                f"unknown agent profile {args.profile!r}: the worker's profiles do not declare it"
            ) from None
        render.print_events(self.out, await self.runtime.events(run_id))
        render.print_outcome(self.out, view)
        return EXIT_OK if view.status is RunStatus.COMPLETED else EXIT_NOT_COMPLETED

    async def status(self, raw_id: str, as_json: bool) -> int:
        # STARTING while no worker has begun it; one that failed to begin or was withdrawn
        # (or that another starter left unbegun) is a RunNotBegunError saying so.
        view = await self.runtime.status(run_id_arg(raw_id))
        return self._shown(view, as_json, lambda: render.print_run(self.out, view))

    async def budget(self, raw_id: str, as_json: bool) -> int:
        state = await self.runtime.budget(run_id_arg(raw_id))
        return self._shown(state, as_json, lambda: render.print_budget(self.out, state))

    def _shown(self, value: BaseModel, as_json: bool, as_text: Callable[[], None]) -> int:
        """`value` as JSON, or as `as_text` prints it."""
        if as_json:
            self.out.print_json(value.model_dump_json())
        else:
            as_text()
        return EXIT_OK

    async def events(self, raw_id: str, after: int, follow: bool, as_json: bool) -> int:
        run_id, last = run_id_arg(raw_id), after

        def emit(batch: list[EventView]) -> int:
            for e in batch:
                if as_json:
                    self.out.print(
                        e.model_dump_json(), markup=False, highlight=False, soft_wrap=True
                    )
                else:
                    render.print_events(self.out, [e])
            return batch[-1].position if batch else last

        while True:
            # A STARTING run (no worker has begun it yet) has no events: a follow waits.
            try:
                batch = await self.runtime.events(run_id, after_position=last)
            except RunNotBegunError as exc:
                # Open but not begun, started by another starter: wait only for those.
                if not (follow and exc.pending):
                    raise
                await asyncio.sleep(FOLLOW_POLL_SECONDS)
                continue
            last = emit(batch)
            if not follow:
                return EXIT_OK
            if batch:
                continue  # drain what is already written before looking at the status
            if (await self.runtime.status(run_id)).status.terminal:
                # A settling event commits with the status: one more read is certain to see it.
                emit(await self.runtime.events(run_id, after_position=last))
                return EXIT_OK
            await asyncio.sleep(FOLLOW_POLL_SECONDS)

    async def decide(self, args: argparse.Namespace, *, approved: bool) -> int:
        run_id, by = run_id_arg(args.run_id), self.actor(args)
        digest = args.digest
        if digest is None:
            current = await self.runtime.status(run_id)
            if current.pending_approval is None:
                raise RunNotAwaitingApprovalError(
                    f"run {run_id} is not waiting for approval (it is {current.status.value})"
                )
            digest = current.pending_approval.turn_digest
        view = await self.runtime.approve(
            run_id, approved=approved, decided_by=by, turn_digest=digest, reason=args.reason
        )
        verdict = "approved" if approved else "denied"
        if isinstance(self.runtime, ApiRuntime) and self.runtime.acted_as:
            by = self.runtime.acted_as
        self.out.print(
            f"{verdict} turn {digest[:12]} of run {run_id} as {by}; the run is {view.status.value}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        return EXIT_OK

    async def cancel(self, args: argparse.Namespace) -> int:
        run_id, by = run_id_arg(args.run_id), self.actor(args)
        before = await self.runtime.status(run_id)
        await self.runtime.cancel(run_id, by=by, reason=args.reason)
        if before.status.terminal:
            message = f"run {run_id} already ended as {before.status.value}; nothing to cancel"
        else:
            message = f"cancel of run {run_id} requested by {by}"
        self.out.print(message, markup=False, highlight=False, soft_wrap=True)
        return EXIT_OK

    async def inbox(self, as_json: bool) -> int:
        """The runs waiting for approval, then those that need an operator's answer or
        check on a write (`agentrt reconcile`)."""
        views = await self.runtime.inbox()
        needing = await self.runtime.attention()
        if as_json:
            for v in [*views, *needing]:
                self.out.print(v.model_dump_json(), markup=False, highlight=False, soft_wrap=True)
        else:
            render.print_inbox(self.out, views)
            render.print_attention(self.out, needing)
        return EXIT_OK
