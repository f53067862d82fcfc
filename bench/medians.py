"""`python -m bench.medians FILE...`: the median of each headline figure over repeated runs.

The figures on a shared machine move by about ±0.1 between runs of the same code, so a set
is several runs of the same command (`--out` a file each, or `python -m bench --repeat N`,
which writes them and prints this) and its figure the median. This reads the markdown
summaries the runs wrote (their "Headline" table), and prints for every ratio or count the
median, the range, the target, `ok` / `OVER` for the median and how many of the runs met
the target on their own.
"""

import re
import statistics
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

# A ratio ("1.23x") or a count ("18", "4.5": SQL statements per run).
_VALUE = re.compile(r"^(\d+(?:\.\d+)?)(x?)$")
_TARGET = re.compile(r"^(<=|>=) (\d+(?:\.\d+)?)$")

# measure -> (value, unit: "x" for a ratio or "" for a count, target)
Values = dict[str, tuple[float, str, str]]


def headline_values(markdown: str) -> Values:
    """measure -> (value, unit, target) for each headline row whose value is a ratio or a
    count."""
    rows: Values = {}
    in_headline = False
    for line in markdown.splitlines():
        if line.startswith("### "):
            in_headline = line.startswith("### Headline")
            continue
        if not in_headline or not line.startswith("| "):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        found = _VALUE.match(cells[1]) if len(cells) >= 3 else None
        if found:
            rows[cells[0]] = (float(found.group(1)), found.group(2), cells[2])
    return rows


def headline_ratios(markdown: str) -> dict[str, tuple[float, str]]:
    """measure -> (ratio, target) for each headline row whose value is a ratio."""
    return {m: (v, t) for m, (v, unit, t) in headline_values(markdown).items() if unit}


def meets(value: float, target: str) -> bool | None:
    """Whether a value meets a target such as "<= 1.3" (None: no target)."""
    found = _TARGET.match(target)
    if not found:
        return None
    bound = float(found.group(2))
    return value <= bound if found.group(1) == "<=" else value >= bound


def verdict(value: float, target: str) -> str:
    ok = meets(value, target)
    return "" if ok is None else "ok" if ok else "OVER"


def _shown(median: float, low: float, high: float, unit: str) -> tuple[str, str]:
    """The median and the range: a ratio to 3 and 2 decimals, a count as it is."""
    if unit:
        return f"{median:.3f}x", f"{low:.2f}-{high:.2f}"
    return f"{median:g}", f"{low:g}-{high:g}"


def aggregate(runs: Sequence[Values]) -> list[str]:
    """For every figure of these runs (each one run's headline): its median, range, target,
    the median's verdict, and how many of the runs that have it met the target."""
    values: dict[str, list[float]] = defaultdict(list)
    kinds: dict[str, tuple[str, str]] = {}
    for run in runs:
        for measure, (value, unit, target) in run.items():
            values[measure].append(value)
            kinds[measure] = (unit, target)
    lines = [f"{len(runs)} runs: median (range), target, verdict of the median, runs that met it"]
    for measure, got in values.items():
        unit, target = kinds[measure]
        median = statistics.median(got)
        shown, spread = _shown(median, min(got), max(got), unit)
        line = (
            f"{measure}: {shown} ({spread}, n={len(got)}) {target} {verdict(median, target)}"
        ).rstrip()
        if meets(median, target) is not None:
            line += f", met {sum(bool(meets(v, target)) for v in got)}/{len(got)}"
        lines.append(line)
    return lines


def summary(files: list[Path]) -> list[str]:
    return aggregate([headline_values(path.read_text()) for path in files])


if __name__ == "__main__":
    print("\n".join(summary([Path(a) for a in sys.argv[1:]])))
