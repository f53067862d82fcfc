"""A model call's live output: the publisher the model activity hands a streaming provider.

Deltas go to the live table (store/live/table.py) in small batches: the first at once, the next
ones as each write returns, so a fast stream costs a write per round trip, not per token.
The table is beside the run, not in Temporal: no history event, Update, query or signal per
delta or per subscriber. Live output is best effort: a failed write stops this call's
publishing (subscribers see the turn when it is committed) and never fails the call.

What may be published follows the run's privacy level and the output guardrails: text
only at `full` and `redacted`; secrets redacted when either the level or the `secrets`
guardrail asks (held back until no future text can complete a secret, see
contracts/redaction.settled_length); no text at all when deny patterns may refuse the
reply, since the text could show before the refusal."""

import asyncio
import logging
from typing import Literal

from agentrt.activities._common import db
from agentrt.contracts.profiles import GuardrailConfig
from agentrt.contracts.redaction import StreamRedactor
from agentrt.store.live.table import LiveStore, Piece

log = logging.getLogger(__name__)

Mode = Literal["full", "redacted", "none"]


def live_mode(privacy: str, rails: GuardrailConfig) -> Mode:
    """What of the text may stream for a run at `privacy` under these output guardrails."""
    if privacy not in ("full", "redacted") or rails.deny_patterns or rails.approval_patterns:
        return "none"
    if privacy == "redacted" or "secrets" in rails.output:
        return "redacted"
    return "full"


# A tool's live output (a remote agent's stream) by the run's privacy level: its text is
# the call's result, recorded at that level; the output guardrails judge the model's reply.
TOOL_MODES: dict[str, Mode] = {"full": "full", "redacted": "redacted"}


def tool_publisher(store: LiveStore | None, run_id: str, sequence: int, privacy: str,
                   turn: int) -> "Publisher | None":  # fmt: skip
    """The live output of a write's attempt at `sequence`, or None (no live channel, or
    the run's level shows no text). Each turn of a call (its first message, each answer
    to a remote's question) publishes as the next attempt: it withdraws the one before."""
    mode = TOOL_MODES.get(privacy, "none")
    if store is None or mode == "none":
        return None
    return Publisher(store, run_id, sequence, turn + 1, mode)


class Publisher:
    """One attempt of one model call. `emit` never waits for the database."""

    def __init__(
        self, store: LiveStore, run_id: str, sequence: int, attempt: int, mode: Mode
    ) -> None:
        self._store, self._run_id, self._mode = store, run_id, mode
        self._sequence, self._attempt = sequence, attempt
        self._redactor = StreamRedactor() if mode == "redacted" else None
        self._offset = 0  # how much text this attempt has published
        self._pending: list[Piece] = []
        self._writer: asyncio.Task[None] | None = None
        self._broken = False
        self.published = False  # anything written: the turn's rows need pruning
        # A retry first withdraws what earlier attempts showed, at once: its first token
        # may be long in coming.
        if attempt > 1 and mode != "none":
            self._pending.append(Piece(sequence, attempt - 1, "retract", -1))
            self._kick()

    async def emit(self, text: str) -> None:
        if self._mode == "none" or not text:
            return
        self._take(text, final=False)

    async def restart(self) -> None:
        """The call starts over within this attempt (a fallback model): withdraw its text."""
        if self._mode == "none":
            return
        if self._redactor is not None:
            self._redactor.reset()
        if self._offset:  # nothing shown, nothing to withdraw
            self._pending.append(Piece(self._sequence, self._attempt, "retract", self._offset))
            self._kick()

    async def withdraw(self) -> None:
        """The call failed: withdraw its text now (a worker that died cannot: the next
        attempt does)."""
        await self.restart()
        await self.finish()

    async def finish(self) -> None:
        """Publish the rest of the text and wait for the writes."""
        self._take("", final=True)
        while self._writer is not None:
            await asyncio.shield(self._writer)

    def _take(self, text: str, *, final: bool) -> None:
        if self._mode == "none":
            return
        fresh = text if self._redactor is None else self._redactor.feed(text, final=final)
        if fresh:
            self._pending.append(Piece(self._sequence, self._attempt, "delta", self._offset, fresh))
            self._offset += len(fresh)
        self._kick()

    def _kick(self) -> None:
        if self._pending and self._writer is None and not self._broken:
            self._writer = asyncio.create_task(self._write())

    async def _write(self) -> None:
        try:
            while self._pending and not self._broken:
                batch, self._pending = _merged(self._pending), []
                try:
                    await db(self._store.publish, self._run_id, batch)
                    self.published = True
                except Exception as exc:  # live output is best effort
                    log.warning("run %s: live output stopped (%s)", self._run_id,
                                type(exc).__name__)  # fmt: skip
                    self._broken = True
        finally:
            self._writer = None


def _merged(pieces: list[Piece]) -> list[Piece]:
    """Adjacent deltas as one piece: a batch is a row per retract and per run of text."""
    out: list[Piece] = []
    for p in pieces:
        last = out[-1] if out else None
        if last is not None and last.kind == p.kind == "delta" and last.attempt == p.attempt:
            out[-1] = Piece(last.sequence, last.attempt, "delta", last.offset, last.text + p.text)
        else:
            out.append(p)
    return out
