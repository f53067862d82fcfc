"""The retention pass: what a Temporal Schedule hands the maintenance workflow."""

from pydantic import BaseModel, Field

PURGE_BATCH = 200  # run ids per activity call: keeps each history event small


class RetentionPolicy(BaseModel):
    """Settled runs are purged `finished_days` after they ended; runs still waiting for a
    decision or an input `waiting_days` after they began waiting are cancelled, then purged.
    A window of 0 (or less) is a configuration error."""

    finished_days: float = Field(gt=0, allow_inf_nan=False)
    waiting_days: float = Field(gt=0, allow_inf_nan=False)


class RunIds(BaseModel):
    run_ids: list[str] = Field(default_factory=list)


class PurgeRequest(BaseModel):
    finished_days: float = Field(gt=0, allow_inf_nan=False)
    run_ids: list[str] = Field(default_factory=list)  # besides the settled ones past the window


class PurgeResult(BaseModel):
    purged: int
    more: bool  # a full batch was purged: call again


class RetentionReport(BaseModel):
    cancelled: int
    purged: int
