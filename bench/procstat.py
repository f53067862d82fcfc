"""CPU time and resident memory of processes, read from /proc (Linux), without psutil."""

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds the process has used so far (its threads included)."""
    raw = Path(f"/proc/{pid}/stat").read_text()
    fields = raw[raw.rindex(")") + 2 :].split()  # after "pid (comm) "
    return (int(fields[11]) + int(fields[12])) / _TICKS  # utime, stime


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def _parent_and_name(pid: int) -> tuple[int, str]:
    raw = Path(f"/proc/{pid}/stat").read_text()
    name = raw[raw.index("(") + 1 : raw.rindex(")")]
    return int(raw[raw.rindex(")") + 2 :].split()[1]), name


def _processes() -> Iterator[tuple[int, int, str]]:
    """(pid, parent pid, name) of every live process."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid, name = _parent_and_name(int(entry.name))
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
        yield int(entry.name), ppid, name


def descendants(pid: int) -> list[tuple[int, str]]:
    """(pid, name) of every live process below `pid`."""
    parents: dict[int, list[tuple[int, str]]] = {}
    for child, ppid, name in _processes():
        parents.setdefault(ppid, []).append((child, name))
    found: list[tuple[int, str]] = []
    todo = [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child[0])
    return found


def dev_server_pids() -> list[int]:
    """The Temporal dev servers this process started (the `temporal` CLI and its children)."""
    return [pid for pid, name in descendants(os.getpid()) if "temporal" in name]


def database_cpu() -> dict[int, float]:
    """CPU seconds so far of each local PostgreSQL server process (named "postgres"), by
    pid: its backends, one per pooled connection, and its background processes."""
    found: dict[int, float] = {}
    for pid, _, name in _processes():
        if name == "postgres":
            with contextlib.suppress(OSError):  # gone meanwhile
                found[pid] = cpu_seconds(pid)
    return found


def database_cpu_since(before: dict[int, float]) -> float:
    """CPU seconds PostgreSQL's processes spent since `before` (a database_cpu() reading); a
    backend started meanwhile counts whole, one that exited meanwhile is lost."""
    return sum(cpu - before.get(pid, 0.0) for pid, cpu in database_cpu().items())


def total_cpu(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        try:
            total += cpu_seconds(pid)
        except OSError:
            pass
    return total
