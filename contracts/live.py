"""Live output: what a model call publishes while it writes, beside the run and not through
Temporal. A subscriber shows deltas as they come and drops them when the turn they belong to
is committed (the committed event is the truth) or when a `retract` withdraws the attempt
that wrote them (a retried or fallen-back call)."""

from typing import Literal

from pydantic import BaseModel, ConfigDict

LiveKind = Literal["delta", "retract"]


class LiveDelta(BaseModel):
    """One published piece. `id` orders a run's pieces (the resume point of a reader);
    `sequence` is the turn's, as its committed `llm` event will have it; `offset` is where
    `text` starts in what this attempt has published. A `retract` withdraws everything
    attempt `attempt` of turn `sequence` published before it."""

    model_config = ConfigDict(frozen=True)

    id: int
    sequence: int
    attempt: int
    kind: LiveKind
    offset: int = 0
    text: str = ""
