"""The load section's processes: the operator API (`agentrt-api serve`) and the workers, as
deployed, and the API's SIGKILL in the middle of a level (`--load-kill-api SECONDS`), after
which it is started again on the same port while the clients carry on: starts resent with
the same run id, followers resuming with Last-Event-ID, decisions made again."""

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx

from bench.harness import RESULTS_DIR

LOG = RESULTS_DIR / "load.log"
LOAD_PROFILES = Path(__file__).with_name("load_profiles.yaml")
REPOSITORY = Path(__file__).resolve().parents[1]
API_ARGV = [sys.executable, "-c", "from agentrt.api.main import main; main()", "serve"]


def spawn(argv: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(
            argv, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in procs:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=10)


def profile_env(profile: str) -> dict[str, str]:
    """What the API's and the workers' environment adds for the load profile: the parallel
    one is in bench/load_profiles.yaml, its reads in the bench-slow toolbox."""
    if profile == "bench-load":
        return {}
    return {
        "AGENTRT_PROFILES_FILE": str(LOAD_PROFILES),
        "AGENTRT_TOOLBOXES": "bench.slow_tools:toolbox",
        "PYTHONPATH": str(REPOSITORY),
    }


async def api_up(url: str, within: float = 60.0) -> None:
    deadline = time.monotonic() + within
    async with httpx.AsyncClient(base_url=url, timeout=5) as c:
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if (await c.get("/openapi.json")).status_code == 200:
                    return
            if time.monotonic() > deadline:
                raise RuntimeError(f"the operator API did not answer at {url}; see {LOG}")
            await asyncio.sleep(0.2)


class Fleet:
    """The API and the workers; `groups` names each one's pids (the API's change when it
    is killed and started again)."""

    def __init__(self, env: dict[str, str], workers: int, port: int) -> None:
        LOG.parent.mkdir(parents=True, exist_ok=True)
        self._api_env = {**env, "AGENTRT_API_HOST": "127.0.0.1", "AGENTRT_API_PORT": str(port)}
        self.url = f"http://127.0.0.1:{port}"
        argv = [sys.executable, "-m", "agentrt.workers"]
        self._workers = [spawn(argv, env, LOG) for _ in range(workers)]
        self._api = spawn(API_ARGV, self._api_env, LOG)
        self.groups: dict[str, list[int]] = {
            "api": [self._api.pid], "workers": [p.pid for p in self._workers],
        }  # fmt: skip
        self.killed: list[float] = []  # each kill's downtime: SIGKILL to answering again
        self.api_cpu_at_kill = 0.0
        self.killing = False

    async def kill_api(self, after: float, cpu: Callable[[list[int]], float]) -> None:
        """SIGKILL the API (its whole process group) `after` seconds from now, start it
        again at once on the same port, and return once it answers. `api_cpu_at_kill`:
        the killed API's CPU seconds (by `cpu`) just before."""
        await asyncio.sleep(after)
        self.killing = True
        began = time.monotonic()
        self.api_cpu_at_kill = cpu(self.groups["api"])
        os.killpg(self._api.pid, signal.SIGKILL)
        await asyncio.to_thread(self._api.wait, 10)
        self._api = spawn(API_ARGV, self._api_env, LOG)
        self.groups["api"] = [self._api.pid]
        await api_up(self.url)
        self.killed.append(time.monotonic() - began)
        self.killing = False
        print(f"    API killed and back in {self.killed[-1]:.1f}s", file=sys.stderr, flush=True)

    def stop(self) -> None:
        stop([self._api, *self._workers])


@contextlib.contextmanager
def fleet(env: dict[str, str], workers: int, port: int) -> Iterator[Fleet]:
    f = Fleet(env, workers, port)
    try:
        yield f
    finally:
        f.stop()
