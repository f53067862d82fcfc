"""The model activity: reads the transcript from the store, calls the provider, records the
turn; when the turn is the answer (contracts.turn.turn_end on the workflow's terms), it
completes the run in the same transaction (activities/settle/completion.py), saving the workflow
a task and a round trip."""

import logging
import time
from collections.abc import Callable, Mapping
from typing import cast

from temporalio import activity

from agentrt.activities._common import (
    ActivityGroup,
    db,
    expected_failure,
    fatal,
    fault,
    heartbeats,
    is_store_unavailable,
)
from agentrt.activities.guardrails import checked as checked_text
from agentrt.activities.live import Publisher, live_mode
from agentrt.activities.model_budget import reservation, reserved_fields
from agentrt.activities.model_output import failed_checks, invalid_answer
from agentrt.activities.model_turn import made_turn, recorded_turn
from agentrt.activities.ports import FaultHook, ModelProvider, StreamingProvider, no_faults, streams
from agentrt.activities.settle.completion import Completion
from agentrt.activities.settle.on_answer import complete_on_answer
from agentrt.contracts.enums import EventKind
from agentrt.contracts.errors import ErrorType, RunNotFoundError
from agentrt.contracts.ids import ACT_MODEL_COMPLETE
from agentrt.contracts.messages import (
    Message,
    ProviderReply,
    ProviderRequest,
    Usage,
)
from agentrt.contracts.output import feedback, why_invalid
from agentrt.contracts.pricing import PriceTable
from agentrt.contracts.run import (
    ModelRequest,
    ModelResult,
    TurnRecord,
)
from agentrt.contracts.snapshot import RunSnapshot
from agentrt.contracts.turn import TurnEnd, turn_end
from agentrt.store.live.table import LiveStore
from agentrt.store.runs.record import RunStore
from agentrt.store.steps.deferred import record_deferred
from agentrt.store.steps.events import event_row
from agentrt.store.steps.write import Part, write_step

log = logging.getLogger(__name__)


def _uncounted(_failed: str, _fallback: str) -> None:
    """No metrics (tests, embedders that count nothing)."""


class ModelActivities(ActivityGroup):
    def __init__(
        self,
        *,
        providers: Mapping[str, ModelProvider],
        runs: RunStore,
        completion: Completion,
        faults: FaultHook = no_faults,
        answer_levels: Mapping[str, str] | None = None,
        prices: Mapping[str, PriceTable] | None = None,
        failed_over: Callable[[str, str], None] = _uncounted,
        live: LiveStore | None = None,
    ) -> None:
        self._failed_over = failed_over  # (failed ref, fallback ref): the worker counts it
        self._live = live  # where a streaming provider's output is published
        self._completion = completion
        self._providers = dict(providers)
        self._answer_levels = dict(answer_levels or {})
        self._prices = dict(prices or {})
        self._runs = runs
        self._faults = faults

    async def _call(
        self, run_id: str, ref: str, request: ProviderRequest, live: Publisher | None
    ) -> ProviderReply:
        """Call the provider of `ref`. A provider whose answer level is stricter than the
        run's ceiling tightens it first: its output must never be kept above its level."""
        provider_name, _, model = ref.partition(":")
        provider = self._providers.get(provider_name)
        if provider is None:
            raise fatal(f"unknown model provider {provider_name!r}", ErrorType.UNKNOWN_PROVIDER)
        level = self._answer_levels.get(provider_name)
        if level is not None and level != "full":
            await db(self._runs.tighten_ceiling, run_id, level)
        request = request.model_copy(update={"model": model})
        if live is not None and streams(provider):
            return await cast(StreamingProvider, provider).stream(request, live.emit)
        return await provider.complete(request)

    def _cost(self, ref: str, usage: Usage) -> float | None:
        """The price table's cost; else what the provider itself reported; else unknown."""
        provider_name, _, model = ref.partition(":")
        table = self._prices.get(provider_name)
        cost = None if table is None else table.cost(model, usage)
        return usage.cost_usd if cost is None else cost

    @activity.defn(name=ACT_MODEL_COMPLETE)
    @heartbeats
    async def complete(self, req: ModelRequest) -> ModelResult:
        turn = await self._complete(req)
        if not req.pending:
            return turn
        # Says that the reads which rode with the call are stored (with its turn, or alone
        # over budget): a model activity of an earlier build ignores them, and the workflow
        # then records them itself (workflows/riding.py).
        return turn.model_copy(update={"pending_written": len(req.pending)})

    async def _complete(self, req: ModelRequest) -> ModelResult:
        turn, unrecorded, shown = await self._turn(req)
        if turn.over_budget and req.pending:  # no turn to ride with: the reads go alone
            await db(record_deferred, self._runs.ctx, req.run_id, req.pending)
        end = turn_end(req.answer, turn)
        if end is TurnEnd.INVALID:
            await self._record_invalid(req, unrecorded)
            await self._prune(req, shown)
            return turn
        if end is not TurnEnd.ANSWER:
            if unrecorded is not None:
                await self._record(req.run_id, unrecorded)
            await self._prune(req, shown)
            return turn
        # The answer: its turn is recorded in the completion's own transaction.
        settled = await complete_on_answer(
            self._completion,
            req,
            turn,
            unrecorded,
            lambda t: self._record(req.run_id, t),
            self._faults,
        )
        await self._prune(req, shown)
        await fault(self._faults, "model.after_settle")
        return turn.model_copy(update={"settled": settled})

    async def _record(self, run_id: str, turn: TurnRecord) -> None:
        await db(self._runs.record_turn, run_id, turn)
        await fault(self._faults, "model.after_record")

    async def _record_invalid(self, req: ModelRequest, turn: TurnRecord | None) -> None:
        """An answer that failed the output schema, then the user turn telling the model
        why with its `output_invalid` event, at the completion's sequence (the workflow
        takes it). Two steps, each
        idempotent (a step writes one row of a kind): a retry that finds the answer
        recorded (`turn` None) writes the note from it."""
        if turn is not None:
            await self._record(req.run_id, turn)
            text = turn.message.content
        else:
            _, _, recorded = await db(self._runs.turn_inputs, req.run_id, req.sequence)
            text = recorded.content if recorded is not None else ""
        schema = req.answer.output_schema
        assert schema is not None  # turn_end says INVALID only for a typed answer
        checks = await failed_checks(text, schema)
        error = why_invalid(checks) if checks else "invalid"
        note = Message(role="user", content=feedback(error))
        row = self._runs.message_row(req.run_id, req.answer.sequence, note)
        # The same why, as the run's event at that sequence (the run's failure points to
        # it): the validator's words are `content`, which the privacy level filters; the
        # schema's rules and paths are the profile's, kept at every level.
        payload = {
            "content": error,
            "checks": [{"rule": c.rule, "schema_path": c.schema_path} for c in checks],
        }
        event = event_row(
            self._runs.ctx.sealer, req.run_id, req.answer.sequence, EventKind.OUTPUT_INVALID,
            req.round, payload, req.privacy,
        )  # fmt: skip
        await db(write_step, self._runs.ctx, [Part("message", row), Part("event", event)])

    def _publisher(self, req: ModelRequest, snap: RunSnapshot) -> Publisher | None:
        if self._live is None:
            return None
        mode = live_mode(req.privacy, snap.guardrails)
        return Publisher(self._live, req.run_id, req.sequence, activity.info().attempt, mode)

    async def _prune(self, req: ModelRequest, shown: bool) -> None:
        """The turn is stored: its live output (this attempt's, or an earlier one's) goes."""
        if self._live is None or not (shown or activity.info().attempt > 1):
            return
        try:
            await db(self._live.prune, req.run_id, req.sequence)
        except Exception as exc:  # stale live rows cost nothing but space; the run goes on
            log.warning("run %s: live output not pruned (%s)", req.run_id, type(exc).__name__)

    async def _turn(self, req: ModelRequest) -> tuple[ModelResult, TurnRecord | None, bool]:
        """The turn, what to record of it (None when it was recorded already), and whether
        live output was published for it."""
        # A retry after the turn was recorded returns the recorded turn: the provider is
        # not called (nor paid) twice, and the transcript cannot fork.
        snap, transcript, recorded = await self._inputs(req)
        if recorded is not None:
            return await recorded_turn(self._runs, req, recorded), None, False
        messages = [Message(role="system", content=snap.instructions), *transcript]
        request = ProviderRequest(
            model="", messages=messages, tools=(snap.tools or None) if req.offer_tools else None,
            round=req.round, output_schema=req.answer.output_schema, max_tokens=req.max_tokens,
        )  # fmt: skip
        # A budget's room: no provider is called for a call whose worst case does not fit.
        worst, refused = reservation(req, request, self._prices)
        if refused is not None:
            return refused, None, False
        started = time.monotonic()
        used = req.model
        await fault(self._faults, "model.before_provider")
        where = f"run {req.run_id} round {req.round}"
        live = self._publisher(req, snap)
        try:
            reply = await self._call(req.run_id, used, request, live)
        except Exception as exc:
            fallback = req.fallback_model
            if not fallback or is_store_unavailable(exc):  # our store, not the provider
                await _withdrawn(live)
                raise expected_failure(exc, f"{where}: {used}") from None
            activity.logger.warning("run %s: %s failed (%s); falling back to %s", req.run_id,
                                    used, type(exc).__name__, fallback)  # fmt: skip
            self._failed_over(used, fallback)
            used = fallback
            if live is not None:
                await live.restart()
            try:
                reply = await self._call(req.run_id, used, request, live)
            except Exception as exc:
                await _withdrawn(live)
                raise expected_failure(exc, f"{where}: {used}") from None
        if live is not None:
            await live.finish()
        duration_ms = (time.monotonic() - started) * 1000
        # The output guardrails read the whole reply (a long one off the event loop).
        rails = snap.guardrails
        checked = await checked_text(reply.content, rails.output, rails)
        invalid = await invalid_answer(
            req, checked.text, reply.tool_calls if req.offer_tools else []
        )
        usage = reply.usage.model_copy(update={"cost_usd": self._cost(used, reply.usage)})
        turn, record = made_turn(
            req, used, reply, usage, checked, (duration_ms, invalid), snap.answer_level
        )
        if worst is not None:
            turn = turn.model_copy(update={"reserved": worst})
            record.payload.update(reserved_fields(worst))
        return turn, record, live is not None and live.published

    async def _inputs(self, req: ModelRequest) -> tuple[RunSnapshot, list[Message], Message | None]:
        """The run's snapshot, its transcript with the reads that ride with this call
        (`req.pending`, at their sequences), and the turn an earlier attempt recorded."""
        try:
            return await db(self._runs.turn_inputs, req.run_id, req.sequence, req.pending)
        except RunNotFoundError:
            raise fatal(f"run {req.run_id} not found", ErrorType.RUN_NOT_FOUND) from None


async def _withdrawn(live: Publisher | None) -> None:
    """A failed call's text is withdrawn at once; a dead worker's, by the next attempt."""
    if live is not None:
        await live.withdraw()
