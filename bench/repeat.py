"""`python -m bench --repeat N`: the selected sections N times in one invocation, then the
median, the range and the runs that met each target of every headline figure.

Each repetition is a whole run of the sections (its own dev server and database, as
`python -m bench` starts), written to a summary file of its own, `<out>-1.md` to
`<out>-N.md`; the aggregation is bench/medians.py's over those files, so a set run this
way and one run by hand (`--out` a file each) read the same. One tree: to compare two
commits, alternate two work trees run by run (docs/benchmarks, "Repeated runs").
"""

import sys
from collections.abc import Callable
from pathlib import Path

from bench import medians


def run_file(out: Path, i: int) -> Path:
    """Repetition i's summary file, beside `out`."""
    return out.with_name(f"{out.stem}-{i}{out.suffix}")


def medians_file(out: Path) -> Path:
    return out.with_name(f"{out.stem}-medians.txt")


def repeat(n: int, out: Path, once: Callable[[Path], None]) -> list[str]:
    """Run `once` n times, each writing its summary to its own file; the aggregate lines,
    also written beside `out`."""
    files = []
    for i in range(1, n + 1):
        print(f"repetition {i} of {n}", file=sys.stderr, flush=True)
        files.append(run_file(out, i))
        once(files[-1])
    lines = medians.summary(files)
    medians_file(out).write_text("\n".join(lines) + "\n")
    return lines
