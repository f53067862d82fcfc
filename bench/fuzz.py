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
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import uvicorn
from temporalio.client import Client

from agentrt.api.app import create_app
from agentrt.api.settings import ApiSettings
from agentrt.core.devserver import extra_args
from agentrt.core.temporal import data_converter
from agentrt.starter.facade import AgentRuntime
from agentrt.store.db.sealing import Sealer
from agentrt.store.runs.record import RunStore
from agentrt.store.security.principals import PrincipalStore
from agentrt.workers.compose import WorkerResources, build
from agentrt.workers.main import make_worker
from bench.a2a_fixtures import fixture_groups, fixture_profiles
from bench.database import bench_database
from bench.fuzz_a2a import a2a_surfaces
from bench.fuzz_answers import input_surface, reconcile_surface
from bench.fuzz_codec import codec_surface, sealed_payloads, signed_in
from bench.fuzz_core import LogTrap, Tally
from bench.fuzz_limits import caps_surface, patterns_surface
from bench.fuzz_local import files_surface, tools_surface
from bench.fuzz_setup import input_task_maker, known_tasks, reconcile_runs, waiting_runs
from bench.fuzz_temporal import cli_argvs, cli_surface, decisions_surface
from bench.fuzz_typed import typed_surface
from bench.harness import dev_server
from bench.report import Table

KEYS = {"alice": "alice-fuzz-key-5d1e", "bob": "bob-fuzz-key-09aa"}
# Share of --cases for each tally; "files", "tools", "decisions" and "typed" each feed two
# tallies (rules and profiles; typed tools and MCP; signal and update; schemas and
# answers), so the shares sum to 1.
SHARES = {
    "files": 0.11, "tools": 0.12, "rpc": 0.15, "rest": 0.09, "decisions": 0.03, "cli": 0.03,
    "patterns": 0.04, "caps": 0.03, "typed": 0.04, "reconcile": 0.02, "input": 0.02,
    "codec": 0.02,
}  # fmt: skip
# The input caps of the fuzzed deployment (issue 25): below the body limit, so both act.
CAPS = {"max_prompt_chars": 4_000, "max_part_chars": 2_000}


def api_settings(url: str, keys: str, data: Path, payload_keys: str) -> ApiSettings:
    # Every fixture profile by name: the fuzz starts what it likes (grants: tests/security).
    # Payload keys: the session codec has payloads to decode.
    groups = fixture_groups(KEYS, blocking_cap_seconds=5.0, max_body_bytes=64_000)
    return ApiSettings().replace(
        database={"url": url, "data_dir": data},
        privacy={"seal_keys": keys, "payload_keys": payload_keys},
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


@contextmanager
def cli_environment(settings: ApiSettings, address: str) -> Iterator[None]:
    env = {
        "AGENTRT_DATABASE_URL": settings.database.resolved_url(),
        "AGENTRT_SEAL_KEYS": settings.read_seal_keys(),
        "AGENTRT_TEMPORAL_ADDRESS": address,
        "AGENTRT_TASK_QUEUE": settings.temporal.task_queue,
        "AGENTRT_PROFILES_FILE": str(settings.worker.profiles_file),
        "AGENTRT_DATA_DIR": str(settings.database.data_dir),
        "AGENTRT_PAYLOAD_KEYS": settings.payload_keys_spec() or "",
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


Count = Callable[[str], int]


async def run(total: int, seed_value: int | None) -> list[Tally]:
    def n(surface: str) -> int:
        return max(1, round(total * SHARES[surface]))

    tallies: list[Tally] = []
    with tempfile.TemporaryDirectory(prefix="agentrt-fuzz-") as tmp, LogTrap() as trap:
        work = Path(tmp)
        with bench_database(work, None) as url:
            keys = f"fuzz:{Sealer.new_key_b64()}"
            settings = api_settings(url, keys, work, f"p1:{Sealer.new_key_b64()}")
            parts = build(settings)
            tallies += await _local(settings, parts, n, seed_value, trap)
            async with dev_server(extra_args()) as plain:
                # Every payload encrypted, as a deployment with payload keys has it.
                client = await Client.connect(
                    plain.service_client.config.target_host,
                    data_converter=data_converter(settings.payload_keys_spec()),
                )
                async with serve(client, settings, parts) as base:
                    tallies += await _served(client, settings, parts, base, n, seed_value, trap)
            parts.close()
    return tallies


async def _local(
    settings: ApiSettings, parts: WorkerResources, n: Count, seed_value: int | None,
    trap: LogTrap,
) -> list[Tally]:  # fmt: skip
    """The in-process surfaces: files, tool arguments, patterns, typed answers."""
    _progress("fuzz: files and tool arguments")
    tallies = await asyncio.to_thread(
        files_surface, settings.providers.rules_file, settings.worker.profiles_file,
        n("files"), seed_value, trap,
    )  # fmt: skip
    tallies += await asyncio.to_thread(
        tools_surface, parts.engine, parts.ctx, n("tools"), seed_value, trap
    )
    _progress("fuzz: redaction and guardrail patterns")
    tallies += await asyncio.to_thread(patterns_surface, n("patterns"), seed_value, trap)
    _progress("fuzz: typed answers and output schemas")
    tallies += await asyncio.to_thread(typed_surface, n("typed"), seed_value, trap)
    return tallies


async def _served(
    client: Client, settings: ApiSettings, parts: WorkerResources, base: str, n: Count,
    seed_value: int | None, trap: LogTrap,
) -> list[Tally]:  # fmt: skip
    """The surfaces over HTTP and through Temporal, against the live server."""
    runtime = AgentRuntime(client, RunStore(parts.ctx), settings.temporal.task_queue)
    ids = await known_tasks(base, KEYS["alice"])
    runs = await waiting_runs(runtime, 3)
    _progress("fuzz: A2A JSON-RPC and REST")
    tallies = await asyncio.to_thread(
        a2a_surfaces, base, parts.engine, ids, KEYS, n, seed_value, trap
    )
    _progress("fuzz: input caps (operator API, A2A)")
    principals = PrincipalStore(parts.ctx)
    ops = principals.create("fuzz-ops", ["runs:start", "runs:read"],
                            profiles=fixture_profiles())[1]  # fmt: skip
    caps = (CAPS["max_prompt_chars"], CAPS["max_part_chars"], settings.api.max_body_bytes)
    tallies += await asyncio.to_thread(
        caps_surface, base, parts.engine, KEYS["alice"], ops, caps, n("caps"), seed_value, trap,
    )  # fmt: skip
    _progress("fuzz: approval decisions (signal, update)")
    loop = asyncio.get_running_loop()
    tallies += await asyncio.to_thread(
        decisions_surface, client, loop, parts.engine, runs, n("decisions"), seed_value, trap,
    )  # fmt: skip
    _progress("fuzz: CLI arguments")
    with cli_environment(settings, client.service_client.config.target_host):
        tallies += await asyncio.to_thread(
            cli_surface, parts.engine, cli_argvs(list(runs), ids[:1]), n("cli"), seed_value, trap,
        )  # fmt: skip
    tallies += await _answers(client, settings, parts, base, n, seed_value, trap)
    return tallies


async def _answers(
    client: Client, settings: ApiSettings, parts: WorkerResources, base: str, n: Count,
    seed_value: int | None, trap: LogTrap,
) -> list[Tally]:  # fmt: skip
    """Answers that move a waiting run (reconcile, input) and the session codec."""
    principals = PrincipalStore(parts.ctx)
    reconciler = principals.create("fuzz-reconciler", ["runs:read-all", "runs:reconcile"])[1]
    reader = principals.create("fuzz-reader", ["runs:read"])[1]
    _progress("fuzz: reconcile answers")
    async with reconcile_runs(client, settings, base, reconciler) as waiting:
        tallies = await asyncio.to_thread(
            reconcile_surface, base, parts.engine, waiting, [reconciler, reconciler, reader, ""],
            n("reconcile"), seed_value, trap,
        )  # fmt: skip
    _progress("fuzz: input answers (A2A follow-ups)")
    new_task, state_of = input_task_maker(base, KEYS["alice"], parts, asyncio.get_running_loop())
    tallies += await asyncio.to_thread(
        input_surface, base, parts.engine, KEYS["alice"], new_task, state_of,
        n("input"), seed_value, trap,
    )  # fmt: skip
    _progress("fuzz: session codec")
    decoder = principals.create("fuzz-decoder", ["runs:read-all", "payloads:decode"])[1]
    sessions = {
        "decode": await asyncio.to_thread(signed_in, base, decoder),
        "read-only": await asyncio.to_thread(signed_in, base, reader),
    }
    values: list[Any] = ["hi", {"a": [1, 2]}, None]
    sealed = await asyncio.to_thread(sealed_payloads, settings.payload_keys_spec() or "", values)
    tallies += await asyncio.to_thread(
        codec_surface, base, parts.engine, sessions, sealed, client.namespace,
        n("codec"), seed_value, trap,
    )  # fmt: skip
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
