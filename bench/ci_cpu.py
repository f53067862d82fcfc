"""Where the suite's CPU goes, per test file: a pytest plugin and its table.

The CI on the 2-core machine is bound by CPU, not by waiting (vmstat: no idle time through
both passes), so its length follows the CPU the tests spend. Per test, the plugin records
the CPU of the pytest process itself (all its threads: the in-process workers, the store)
and of the child processes it reaped meanwhile (worker processes, API servers, CLIs,
browsers, dev servers a test starts). A child reaped later than its test is counted to
the test that reaped it, so read a file's row, not a single test's; the session's own dev
server is counted to each pytest process's last test, whose teardown stops it.

    ./dev test -p bench.ci_cpu        # each pytest process appends to $AGENTRT_CI_CPU_DIR
    python -m bench.ci_cpu DIR        # the table, most CPU first
"""

import argparse
import json
import os
import resource
import time
from collections.abc import Generator, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import pytest

DIR_VARIABLE = "AGENTRT_CI_CPU_DIR"
_out: IO[str] | None = None


def _cpu() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime


def _file() -> IO[str]:
    global _out
    if _out is None:
        folder = Path(os.environ.get(DIR_VARIABLE, "bench/results/ci_cpu"))
        folder.mkdir(parents=True, exist_ok=True)
        db = os.environ.get("AGENTRT_TEST_DATABASE", "sqlite")
        _out = (folder / f"{db}-{os.getpid()}.jsonl").open("a")
    return _out


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, None, None]:
    own0, kids0 = _cpu()
    wall0 = time.monotonic()
    yield
    own1, kids1 = _cpu()
    row = {"id": item.nodeid, "own": own1 - own0, "kids": kids1 - kids0}
    out = _file()
    out.write(json.dumps({**row, "wall": time.monotonic() - wall0}) + "\n")
    out.flush()


@dataclass
class FileCpu:
    database: str
    path: str
    own: float = 0.0
    kids: float = 0.0
    wall: float = 0.0
    tests: int = 0

    @property
    def cpu(self) -> float:
        return self.own + self.kids


def by_file(rows: Iterable[tuple[str, dict[str, object]]]) -> list[FileCpu]:
    """(database, row) pairs summed per database and test file, most CPU first."""
    files: dict[tuple[str, str], FileCpu] = {}
    for database, row in rows:
        path = str(row["id"]).split("::")[0]
        f = files.setdefault((database, path), FileCpu(database, path))
        f.own += float(str(row["own"]))
        f.kids += float(str(row["kids"]))
        f.wall += float(str(row["wall"]))
        f.tests += 1
    return sorted(files.values(), key=lambda f: -f.cpu)


def table(files: list[FileCpu], most: int) -> str:
    own, kids = sum(f.own for f in files), sum(f.kids for f in files)
    lines = [
        f"in tests: {own:.0f} CPU-s in pytest, {kids:.0f} CPU-s in reaped children",
        "     cpu     own    kids    wall    n database path",
    ]
    lines += [
        f"{f.cpu:8.1f} {f.own:7.1f} {f.kids:7.1f} {f.wall:7.1f} {f.tests:4d} {f.database:8s} "
        f"{f.path}"
        for f in files[:most]
    ]
    return "\n".join(lines)


def _rows(folder: Path) -> Iterable[tuple[str, dict[str, object]]]:
    for path in sorted(folder.glob("*.jsonl")):
        database = path.name.split("-")[0]
        for line in path.read_text().splitlines():
            yield database, json.loads(line)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.ci_cpu", description=__doc__)
    parser.add_argument("folder", type=Path, nargs="?", default=Path("bench/results/ci_cpu"))
    parser.add_argument("--most", type=int, default=40)
    args = parser.parse_args()
    print(table(by_file(_rows(args.folder)), args.most))


if __name__ == "__main__":
    main()
