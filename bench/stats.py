"""Summary statistics of latency samples (milliseconds)."""

import statistics
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Summary:
    n: int
    mean: float
    p50: float
    p95: float

    @classmethod
    def of(cls, samples: Sequence[float]) -> "Summary":
        if not samples:
            raise ValueError("no samples")
        ordered = sorted(samples)
        return cls(
            n=len(ordered),
            mean=statistics.fmean(ordered),
            p50=statistics.median(ordered),
            p95=percentile(ordered, 95),
        )


def percentile(ordered: Sequence[float], pct: float) -> float:
    """Linear interpolation between closest ranks; defined for a single sample too."""
    if len(ordered) == 1:
        return ordered[0]
    pos = (len(ordered) - 1) * pct / 100
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def ratio(a: float, b: float) -> float:
    return a / b if b else float("nan")
