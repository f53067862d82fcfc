"""`python -m bench fuzz`: fuzz every input surface and print the cases per surface.

One dev server, one worker, one live A2A server on 127.0.0.1, a fresh database; tasks in
each state and a few runs waiting for approval are made first, then each surface's cases
run against them (see bench/fuzz_*.py for what each surface checks). The profiles and
rules are the A2A tests' own (tests/api/fixtures): a published skill with approval-bound
writes and rules that answer, ask for input and ask for approval.
"""

import argparse
import asyncio
import os
import socket
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import httpx
import uvicorn
from temporalio.client import Client

from agentrt.api.app import create_app
from agentrt.api.settings import ApiSettings
from agentrt.core.devserver import extra_args
from agentrt.starter.facade import AgentRuntime
from agentrt.store.principals import PrincipalStore
from agentrt.store.runs import RunStore
from agentrt.store.sealing import Sealer
from agentrt.workers.compose import WorkerResources, build
from agentrt.workers.main import make_worker
from bench.a2a_fixtures import fixture_groups
from bench.database import bench_database
from bench.fuzz_a2a import a2a_surfaces
from bench.fuzz_core import LogTrap, Tally
from bench.fuzz_limits import caps_surface, patterns_surface
from bench.fuzz_local import files_surface, tools_surface
from bench.fuzz_temporal import cli_argvs, cli_surface, decisions_surface
from bench.harness import dev_server
from bench.report import Table

KEYS = {"alice": "alice-fuzz-key-5d1e", "bob": "bob-fuzz-key-09aa"}
# Share of --cases for each tally; "files", "tools" and "decisions" each feed two tallies
# (rules and profiles; typed tools and MCP; signal and update), so the shares sum to 1.
SHARES = {
    "files": 0.13, "tools": 0.14, "rpc": 0.17, "rest": 0.11, "decisions": 0.03, "cli": 0.04,
    "patterns": 0.05, "caps": 0.03,
}  # fmt: skip
# The input caps of the fuzzed deployment (issue 25): below the body limit, so both act.
CAPS = {"max_prompt_chars": 4_000, "max_part_chars": 2_000}


def api_settings(url: str, keys: str, data: Path) -> ApiSettings:
    # Every fixture profile by name: the fuzz starts what it likes (grants: tests/security).
    groups = fixture_groups(KEYS, blocking_cap_seconds=5.0, max_body_bytes=64_000)
    return ApiSettings().replace(
        database={"url": url, "data_dir": data},
        privacy={"seal_keys": keys},
        **groups,
        push={"backoff_seconds": 0.2, "max_attempts": 1},
        temporal={"task_queue": f"fuzz-{uuid.uuid4().hex[:8]}"},
        limits=CAPS,
    )


@asynccontextmanager
async def serve(
    client: Client, settings: ApiSettings, parts: WorkerResources
) -> AsyncIterator[str]:
    """The worker and the A2A app on a free 127.0.0.1 port; yields the base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    s = settings.replace(api={"port": port, "public_url": url})
    app = create_app(s, client=client)
    server = uvicorn.Server(uvicorn.Config(app, log_config=None, lifespan="on"))
    async with make_worker(client, parts, s):
        task = asyncio.create_task(server.serve(sockets=[sock]))
        try:
            for _ in range(1000):
                if server.started:
                    break
                await asyncio.sleep(0.01)
            yield url
        finally:
            server.should_exit = True
            await task
            sock.close()


async def known_tasks(url: str) -> list[str]:
    """A completed task, one waiting for input, one waiting for approval."""
    ids = []
    async with httpx.AsyncClient(timeout=60) as http:
        for text in ("hello", "which order", "refund order 1042"):
            message = {
                "messageId": str(uuid.uuid4()),
                "role": "ROLE_USER",
                "parts": [{"text": text}],
            }
            reply = await http.post(
                url + "/",
                json={"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                      "params": {"message": message}},
                headers={"Authorization": f"Bearer {KEYS['alice']}", "A2A-Version": "1.0"},
            )  # fmt: skip
            ids.append(reply.json()["result"]["task"]["id"])
    return ids


async def waiting_runs(runtime: AgentRuntime, n: int, profile: str = "helper") -> dict[str, str]:
    """n runs waiting for approval: run id -> the digest of the pending turn."""
    out: dict[str, str] = {}
    for i in range(n):
        run_id = await runtime.start(profile, f"refund order 10{i:02d}", initiator="fuzz")
        for _ in range(400):
            try:
                view = await runtime.status(run_id)
            except Exception:  # no row until the worker begins the run
                view = None
            if view is not None and view.pending_approval is not None:
                out[run_id] = view.pending_approval.turn_digest
                break
            await asyncio.sleep(0.05)
        else:
            raise RuntimeError(f"run {run_id} never waited for approval")
    return out


@contextmanager
def cli_environment(settings: ApiSettings, address: str) -> Iterator[None]:
    env = {
        "AGENTRT_DATABASE_URL": settings.database.resolved_url(),
        "AGENTRT_SEAL_KEYS": settings.read_seal_keys(),
        "AGENTRT_TEMPORAL_ADDRESS": address,
        "AGENTRT_TASK_QUEUE": settings.temporal.task_queue,
        "AGENTRT_PROFILES_FILE": str(settings.worker.profiles_file),
        "AGENTRT_DATA_DIR": str(settings.database.data_dir),
    }
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


async def run(total: int, seed_value: int | None) -> list[Tally]:
    def n(surface: str) -> int:
        return max(1, round(total * SHARES[surface]))

    tallies: list[Tally] = []
    with tempfile.TemporaryDirectory(prefix="agentrt-fuzz-") as tmp, LogTrap() as trap:
        work = Path(tmp)
        with bench_database(work, None) as url:
            settings = api_settings(url, f"fuzz:{Sealer.new_key_b64()}", work)
            parts = build(settings)
            _progress("fuzz: files and tool arguments")
            tallies += await asyncio.to_thread(
                files_surface, settings.providers.rules_file, settings.worker.profiles_file,
                n("files"), seed_value, trap,
            )  # fmt: skip
            tallies += await asyncio.to_thread(
                tools_surface, parts.engine, parts.ctx, n("tools"), seed_value, trap
            )
            _progress("fuzz: redaction and guardrail patterns")
            tallies += await asyncio.to_thread(patterns_surface, n("patterns"), seed_value, trap)
            async with dev_server(extra_args()) as client, serve(client, settings, parts) as base:
                runtime = AgentRuntime(client, RunStore(parts.ctx), settings.temporal.task_queue)
                ids = await known_tasks(base)
                runs = await waiting_runs(runtime, 3)
                _progress("fuzz: A2A JSON-RPC and REST")
                tallies += await asyncio.to_thread(
                    a2a_surfaces, base, parts.engine, ids, KEYS, n, seed_value, trap
                )
                _progress("fuzz: input caps (operator API, A2A)")
                ops = PrincipalStore(parts.ctx).create("fuzz-ops", ["runs:start", "runs:read"])[1]
                caps = (
                    CAPS["max_prompt_chars"],
                    CAPS["max_part_chars"],
                    settings.api.max_body_bytes,
                )
                tallies += await asyncio.to_thread(
                    caps_surface, base, parts.engine, KEYS["alice"], ops, caps,
                    n("caps"), seed_value, trap,
                )  # fmt: skip
                _progress("fuzz: approval decisions (signal, update)")
                loop = asyncio.get_running_loop()
                tallies += await asyncio.to_thread(
                    decisions_surface, client, loop, parts.engine, runs,
                    n("decisions"), seed_value, trap,
                )  # fmt: skip
                _progress("fuzz: CLI arguments")
                address = client.service_client.config.target_host
                with cli_environment(settings, address):
                    tallies += await asyncio.to_thread(
                        cli_surface, parts.engine, cli_argvs(list(runs), ids[:1]),
                        n("cli"), seed_value, trap,
                    )  # fmt: skip
            parts.close()
    return tallies


def table(tallies: list[Tally]) -> Table:
    t = Table("Fuzz cases per surface", ["surface", "cases", "accepted", "rejected", "failures"])
    for x in tallies:
        t.rows.append([x.surface, str(x.cases), str(x.accepted), str(x.rejected), str(x.failed)])
    t.rows.append(["total", str(sum(x.cases for x in tallies)), "", "",
                   str(sum(x.failed for x in tallies))])  # fmt: skip
    return t


def main(argv: list[str]) -> None:
    p = argparse.ArgumentParser(prog="python -m bench fuzz", description=__doc__)
    p.add_argument("--cases", type=int, default=10_000, help="total cases over all surfaces")
    p.add_argument("--seed", type=int, default=0, help="hypothesis seed (-1: derandomized)")
    ns = p.parse_args(argv)
    started = time.monotonic()
    tallies = asyncio.run(run(ns.cases, None if ns.seed < 0 else ns.seed))
    print(table(tallies).text())
    for x in tallies:
        for f in x.failures:
            print(f"FAIL {x.surface}: {f}")
    print(f"fuzz: {sum(x.cases for x in tallies)} cases in {time.monotonic() - started:.0f} s")
    if any(x.failed for x in tallies):
        raise SystemExit(1)
