"""The one request of a start, whoever asks: the facade, the operator API, the CLI or the
A2A server (issue 26). Validated once, with one iteration bound and the deployment's prompt
cap; the workflow's input (RunRequest) is made from it."""

from typing import Any, ClassVar, Literal
from uuid import UUID

from pydantic import (
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from agentrt.contracts import profiles
from agentrt.contracts.errors import InvalidRequestError, PromptTooLongError, UnknownFieldsError
from agentrt.contracts.run import PROMPT_CHARS_CEILING, RunRequest, prompt_over_cap
from agentrt.contracts.strict import UNKNOWN_KEYS, Strict


class StartRequest(Strict):
    """A start as its caller asks for it: the one type, and the one validation, of every
    start. The facade builds it from its arguments, the operator API from the body of
    `POST /runs` (extra fields are refused), the CLI before it connects, the A2A server
    from a message that creates a task; the workflow input (RunRequest) is made from it.

    Who starts the run is no part of it: the caller (facade, CLI), the token's principal
    (operator API) or the A2A key names the initiator. The prompt cap is per deployment
    (AGENTRT_MAX_PROMPT_CHARS): validate with `checked`, which passes it as context."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    _noun: ClassVar[str] = "field"

    profile: str = Field(max_length=100)
    prompt: str = Field(description=f"at most AGENTRT_MAX_PROMPT_CHARS (<= {PROMPT_CHARS_CEILING})")
    max_iterations: int | None = Field(
        default=None,
        description="rounds of model and tool calls before the run must answer; the "
        "profile's own when absent",
        json_schema_extra={"minimum": 1, "maximum": profiles.ITERATIONS_CEILING_LIMIT},
    )
    run_id: UUID | None = Field(
        default=None,
        description="chosen by the caller to make the start safe to retry: the same run_id "
        "from the same principal answers with that run (200) instead of starting another",
    )

    @classmethod
    def checked(
        cls,
        max_prompt_chars: int,
        fields: dict[str, Any],
        *,
        prompt_name: str = "prompt",
        max_iterations_ceiling: int = profiles.MAX_ITERATIONS_CEILING,
    ) -> "StartRequest":
        """`fields` validated with this deployment's prompt cap and iteration ceiling
        (AGENTRT_MAX_ITERATIONS_CEILING); bad input raises InvalidRequestError
        (PromptTooLongError for the cap), naming the field or the setting."""
        context = {
            "max_prompt_chars": max_prompt_chars,
            "prompt_name": prompt_name,
            "max_iterations_ceiling": max_iterations_ceiling,
        }
        try:
            return cls.model_validate(fields, context=context)
        except ValidationError as exc:
            first = exc.errors()[0]
            if first["type"] == UNKNOWN_KEYS:
                raise UnknownFieldsError(first["msg"]) from None
            if first["type"] == "value_error":  # ours below: the message names the field
                raise InvalidRequestError(first["msg"].removeprefix("Value error, ")) from None
            where = ".".join(str(p) for p in first["loc"])
            raise InvalidRequestError(f"{where}: {first['msg']}") from None

    @field_validator("profile")
    @classmethod
    def _profile(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("profile is required")
        return value

    @field_validator("prompt")
    @classmethod
    def _prompt(cls, value: str, info: ValidationInfo) -> str:
        context = info.context or {}
        cap = context.get("max_prompt_chars", PROMPT_CHARS_CEILING)
        too_long = prompt_over_cap(value, cap, context.get("prompt_name", "prompt"))
        if too_long is not None:
            raise PromptTooLongError(too_long)  # typed, past the ValidationError mapping
        if not value.strip():
            raise ValueError("prompt is empty")
        return value

    @field_validator("max_iterations")
    @classmethod
    def _iterations(cls, value: int | None, info: ValidationInfo) -> int | None:
        # The installation's ceiling (AGENTRT_MAX_ITERATIONS_CEILING), passed by `checked`;
        # without it, the design's 20.
        ceiling = (info.context or {}).get("max_iterations_ceiling")
        refused = (
            None
            if value is None
            else profiles.over_ceiling(value, ceiling or profiles.MAX_ITERATIONS_CEILING)
        )
        if refused is not None:
            raise ValueError(refused)
        return value

    @field_validator("run_id", mode="before")
    @classmethod
    def _run_id(cls, value: object) -> object:
        if isinstance(value, str):
            try:
                return UUID(value)
            except ValueError:
                raise ValueError(f"run id {value!r} is not a uuid") from None
        return value

    def run_request(
        self, run_id: str, initiator: str, a2a_task_id: str | None = None
    ) -> RunRequest:
        """The workflow's input for this start, as run `run_id` (this request's own, or one
        the starter made)."""
        return RunRequest(
            run_id=run_id,
            profile=self.profile,
            prompt=self.prompt,
            max_iterations=self.max_iterations,
            initiator=initiator,
            a2a_task_id=a2a_task_id,
        )


# How long a start waits (`start(..., wait=...)`, `agentrt start --accepted`, `POST /runs`
# with `Prefer: respond-async`): "begun", until a worker has begun the run (its row exists);
# "accepted", only until Temporal holds it (status STARTING until a worker begins it).
StartWait = Literal["begun", "accepted"]
