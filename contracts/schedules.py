"""Scheduled runs (issue 44): what a schedule of runs is made from, what each fire carries,
and the one rule that makes a fire's run id, so a fire retried, replayed or reset never
starts a second run.

A schedule is a Temporal Schedule (visible in Temporal Web) whose action starts the
`ScheduledFire` workflow (workflows/scheduled.py) with a `FireInput`; the fire starts the
agent run as its child under `fire_run_id(schedule, scheduled time)`."""

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agentrt.contracts import profiles
from agentrt.contracts.enums import RunStatus
from agentrt.contracts.errors import InvalidRequestError, UnknownFieldsError
from agentrt.contracts.linear import linear
from agentrt.contracts.start import StartRequest
from agentrt.contracts.strict import UNKNOWN_KEYS, Strict

# The namespace of fire run ids: fixed forever (changing it would let a fire that is
# replayed after an upgrade start a second run).
FIRE_NAMESPACE = uuid.UUID("5b6f2d8e-1c4a-5e39-9f0d-6a7c2e41b8d3")
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$"
RESERVED_PREFIX = "agentrt-"  # the deployment's own schedules (retention)
# Memo keys of a schedule of runs: what the list shows without decoding its action.
MEMO_KIND, KIND_RUNS = "agentrt", "runs"
MEMO_CREATED_BY, MEMO_PROFILE, MEMO_SPEC = "created_by", "profile", "spec"
Overlap = Literal[
    "skip", "buffer_one", "buffer_all", "cancel_other", "terminate_other", "allow_all"
]
_EVERY = linear(r"^\s*(?P<count>[0-9]+)\s*(?P<unit>[smhd])\s*$")
_NAME = linear(NAME_PATTERN)
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
MAX_EVERY = timedelta(days=366)


def fire_run_id(schedule_id: str, scheduled_at: datetime) -> str:
    """The run id of the fire of `schedule_id` scheduled at `scheduled_at`: the same for
    every attempt, replay or reset of that fire, different for every other fire. Whole
    seconds: Temporal names a fire's workflow by the second too, so two fires within one
    second are one fire already, and the time read back from a description or a search
    attribute may differ below the second."""
    at = scheduled_at.astimezone(UTC).replace(microsecond=0).isoformat()
    return str(uuid.uuid5(FIRE_NAMESPACE, f"{schedule_id}@{at}"))


def is_schedule_name(name: str) -> bool:
    """Whether `name` may name a schedule of runs (NAME_PATTERN, matched in linear time)."""
    return _NAME.search(name)


SCHEDULED_PREFIX = "schedule:"


def initiator_of(schedule_id: str, created_by: str) -> str:
    """Who a fire's run names as its initiator: the schedule, and who made it."""
    return f"{SCHEDULED_PREFIX}{schedule_id} by {created_by}"


def sees(visible_to: str | None, initiator: str) -> bool:
    """Whether a principal that sees only its own runs (`visible_to`; None: sees every run)
    sees a run started by `initiator`: the runs it started, and the fires of the schedules
    it made. Unambiguous: a schedule's name and a principal's have no space, and no
    principal's name holds a ':' (so none is `schedule:...`)."""
    if visible_to is None or initiator == visible_to:
        return True
    name, by, creator = initiator.removeprefix(SCHEDULED_PREFIX).rpartition(" by ")
    return (
        initiator.startswith(SCHEDULED_PREFIX) and bool(by) and creator == visible_to
        and is_schedule_name(name)
    )  # fmt: skip


def parse_every(raw: str) -> timedelta:
    """`30s`, `5m`, `2h`, `1d` as a timedelta; anything else is InvalidRequestError."""
    found = _EVERY.captures(raw)
    if found is None or found["count"] is None or found["unit"] is None:
        raise InvalidRequestError(
            f"every {raw!r} is not an interval: write a whole number and a unit, "
            "s, m, h or d (30s, 5m, 2h, 1d)"
        )
    every = timedelta(seconds=int(found["count"]) * _UNITS[found["unit"]])
    if every < timedelta(seconds=1) or every > MAX_EVERY:
        raise InvalidRequestError(f"every {raw!r} must be between 1s and 366d")
    return every


class ScheduleRequest(Strict):
    """A schedule of runs as its creator asks for it: one profile, one prompt, and when
    (a cron expression or an interval, one of the two). The creator is no part of it: the
    CLI's --initiator or the API token's principal."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    _noun: ClassVar[str] = "field"

    name: str = Field(pattern=NAME_PATTERN, description="the schedule's id in Temporal")
    profile: str = Field(max_length=100)
    prompt: str
    cron: str | None = Field(default=None, max_length=200, description="5 to 7 fields")
    every: str | None = Field(default=None, max_length=20, description="30s, 5m, 2h, 1d")
    overlap: Overlap = Field(
        default="skip", description="a fire due while the last run still runs: skipped"
    )
    max_iterations: int | None = None
    paused: bool = False
    note: str | None = Field(default=None, max_length=200)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if value.startswith(RESERVED_PREFIX):
            raise ValueError(f"a schedule name may not begin with {RESERVED_PREFIX!r}")
        return value

    @classmethod
    def checked(
        cls,
        max_prompt_chars: int,
        fields: dict[str, Any],
        *,
        max_iterations_ceiling: int = profiles.MAX_ITERATIONS_CEILING,
    ) -> "ScheduleRequest":
        """`fields` validated, the run part as a start's (StartRequest.checked), and
        exactly one of cron and every; bad input raises InvalidRequestError."""
        try:
            request = cls.model_validate(fields)
        except ValidationError as exc:
            first = exc.errors()[0]
            if first["type"] == UNKNOWN_KEYS:
                raise UnknownFieldsError(first["msg"]) from None
            where = ".".join(str(p) for p in first["loc"])
            message = first["msg"].removeprefix("Value error, ")
            raise InvalidRequestError(f"{where}: {message}" if where else message) from None
        request.start(max_prompt_chars, max_iterations_ceiling)
        if (request.cron is None) == (request.every is None):
            raise InvalidRequestError("give exactly one of cron and every")
        if request.every is not None:
            parse_every(request.every)
        elif request.cron is not None and not request.cron.strip():
            raise InvalidRequestError("cron is empty")
        return request

    def start(self, max_prompt_chars: int, max_iterations_ceiling: int) -> StartRequest:
        """The run each fire starts, validated as any start is."""
        fields = {"profile": self.profile, "prompt": self.prompt}
        if self.max_iterations is not None:
            fields["max_iterations"] = self.max_iterations  # type: ignore[assignment]
        return StartRequest.checked(
            max_prompt_chars, fields, max_iterations_ceiling=max_iterations_ceiling
        )

    def spec_text(self) -> str:
        return f"cron {self.cron}" if self.cron is not None else f"every {self.every}"


class FireInput(BaseModel):
    """The input of every fire of one schedule (the Schedule's action holds it)."""

    schedule_id: str
    profile: str
    prompt: str
    max_iterations: int | None = None
    initiator: str
    task_queue: str  # the run's queue: the profile's own as registered, else the default


class FireResult(BaseModel):
    """How a fire ended: the run it started, or the one it found already started."""

    run_id: str
    attached: bool = False  # the run existed: an earlier attempt of this fire started it
    status: RunStatus | None = None  # the run's, when this fire saw it end


class ScheduleView(BaseModel):
    """A schedule of runs as a list shows it (never its prompt)."""

    name: str
    profile: str
    spec: str
    overlap: str
    paused: bool
    created_by: str
    note: str | None = None
    next_fires: list[datetime] = Field(default_factory=list)
    recent_runs: list[str] = Field(default_factory=list)  # run ids, newest last
