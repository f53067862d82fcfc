"""`python -m bench.medians FILE...`: the median of each headline ratio over repeated runs.

The figures on a shared machine move by about ±0.1 between runs of the same code, so a set
is several runs of the same command (`--out` a file each) and its figure the median. This
reads the markdown summaries the runs wrote (their "Headline" table), and prints for every
ratio the median, the range, the target and `ok` / `OVER` for the median.
"""

import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path

_RATIO = re.compile(r"^(\d+(?:\.\d+)?)x$")
_TARGET = re.compile(r"^(<=|>=) (\d+(?:\.\d+)?)$")


def headline_ratios(markdown: str) -> dict[str, tuple[float, str]]:
    """measure -> (ratio, target) for each headline row whose value is a ratio."""
    rows: dict[str, tuple[float, str]] = {}
    in_headline = False
    for line in markdown.splitlines():
        if line.startswith("### "):
            in_headline = line.startswith("### Headline")
            continue
        if not in_headline or not line.startswith("| "):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        found = _RATIO.match(cells[1]) if len(cells) >= 3 else None
        if found:
            rows[cells[0]] = (float(found.group(1)), cells[2])
    return rows


def verdict(value: float, target: str) -> str:
    found = _TARGET.match(target)
    if not found:
        return ""
    bound = float(found.group(2))
    return "ok" if (value <= bound if found.group(1) == "<=" else value >= bound) else "OVER"


def summary(files: list[Path]) -> list[str]:
    values: dict[str, list[float]] = defaultdict(list)
    targets: dict[str, str] = {}
    for path in files:
        for measure, (value, target) in headline_ratios(path.read_text()).items():
            values[measure].append(value)
            targets[measure] = target
    lines = [f"{len(files)} runs: median (range), target"]
    for measure, got in values.items():
        median = statistics.median(got)
        lines.append(
            f"{measure}: {median:.3f}x ({min(got):.2f}-{max(got):.2f}, n={len(got)}) "
            f"{targets[measure]} {verdict(median, targets[measure])}".rstrip()
        )
    return lines


if __name__ == "__main__":
    print("\n".join(summary([Path(a) for a in sys.argv[1:]])))
