"""The remote-agent tests' two sides. The remote: agentrt's own A2A server as users run it
(`agentrt-api serve`, in its own process, on its own database) with a worker serving its
published profile `quoter`. The caller: worker processes whose profiles call
`partner.quoter`, configured by a servers file that pins the remote's card."""

import asyncio
import json
import signal
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest_asyncio
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from agentrt.activities.toolbox.remote_config import card_digest
from agentrt.activities.toolbox.remote_http import CARD_PATH, canonical
from agentrt.api.settings import key_digest
from agentrt.core.settings import Settings
from agentrt.starter.facade import AgentRuntime
from agentrt.store.a2a.tasks import A2AStore
from agentrt.workers.builder import make_worker
from agentrt.workers.compose import WorkerResources, build
from agentrt.workers.team_remote import api_env
from tests.workers._proc import WorkerPool, WorkerProcess, worker_env
from tests.workers.test_telemetry_process import free_port
from tests.workflows._waiting import until

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "remote"
CALLER = "partner-caller"  # the remote's A2A identity for our worker
TOKEN = "partner-key-5d1e0b7a"
TOKEN_ENV = "PARTNER_TOKEN"


@dataclass
class Remote:
    url: str
    proc: subprocess.Popen[bytes]
    parts: WorkerResources
    log: Path

    async def digest(self) -> str:
        """The card's digest, as an operator pins it after reviewing the card."""
        async with httpx.AsyncClient(timeout=10) as http:
            reply = await http.get(f"{self.url}/{CARD_PATH}")
            reply.raise_for_status()
            return card_digest(canonical(reply.json()))

    def tasks(self) -> int:
        """How many A2A tasks our worker's identity made on the remote."""
        return A2AStore(self.parts.ctx).page(owner=CALLER).total

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


async def _card_served(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    """Wait until the API answers its card with the `quoter` skill (its worker registered)."""
    async with httpx.AsyncClient(timeout=5) as http:

        async def served() -> bool:
            if proc.poll() is not None:
                text = await asyncio.to_thread(log.read_text)
                raise AssertionError(f"the remote API exited:\n{text[-3000:]}")
            try:
                reply = await http.get(f"{url}/{CARD_PATH}")
            except httpx.TransportError:
                return False
            card = reply.json() if reply.status_code == 200 else {}
            return any(s.get("id") == "quoter" for s in card.get("skills", []))

        await until(served, "the remote API's card with `quoter` served", 60)


def _spawn_api(env: dict[str, str], cwd: Path, log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "agentrt.api.main", "serve"],
            env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
            start_new_session=True,
        )  # fmt: skip


@asynccontextmanager
async def remote_agentrt(
    client: Client, address: str, settings: Settings, workdir: Path, url: str
) -> AsyncIterator[Remote]:
    """The remote: on the migrated database of its own at `url` (the test module makes it
    with tests/_db.py, so the second pass's selection sees it), its worker (in this
    process, on its own queue) and `agentrt-api serve` in another process."""
    queue = f"tq-remote-{uuid.uuid4().hex[:8]}"
    own = settings.replace(
        database={"url": url},
        temporal={"task_queue": queue, "address": address},
        worker={"profiles_file": FIXTURES / "remote_profiles.yaml"},
        providers={"rules_file": FIXTURES / "remote_rules.yaml"},
    )
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = workdir / "remote-api.log"
    with build(own) as parts:
        async with make_worker(client, parts, own):
            env = api_env(own, port, caller=CALLER, digest=key_digest(TOKEN), profiles="quoter")
            env["AGENTRT_PROFILES_FILE"] = str(FIXTURES / "remote_profiles.yaml")
            proc = await asyncio.to_thread(_spawn_api, env, workdir, log)
            remote = Remote(base, proc, parts, log)
            try:
                await _card_served(base, proc, log)
                yield remote
            finally:
                remote.stop()


def servers_file(
    path: Path, url: str, digest: str, schema: bool = True, reserve: int | None = None
) -> Path:
    """The caller's servers file: the remote agent `partner`, its card pinned; `reserve`:
    the tokens its skill declares as one call's worst case."""
    skill: dict[str, object] = {"effect": "NON_IDEMPOTENT_WRITE"}
    if reserve is not None:
        skill["reserve"] = {"tokens": reserve}
    if schema:
        skill["output_schema"] = {
            "type": "object",
            "required": ["order_id", "total_cents"],
            "properties": {"order_id": {"type": "string"}, "total_cents": {"type": "integer"}},
        }
    entry = {
        "name": "partner", "url": url, "token_from_env": TOKEN_ENV,
        "pinned_card_digest": digest, "skills": {"quoter": skill},
    }  # fmt: skip
    path.write_text(json.dumps({"remote_agents": [entry]}))  # JSON is YAML
    return path


def caller_env(settings: Settings, address: str, queue: str, servers: Path) -> dict[str, str]:
    """A caller worker's environment: its profiles and model, the servers file, loopback
    allowed for remote agents (the tests' remote runs on this machine), the token."""
    env = worker_env(settings, temporal_address=address, task_queue=queue)
    env.update(
        AGENTRT_PROFILES_FILE=str(FIXTURES / "profiles.yaml"),
        AGENTRT_RULES_FILE=str(FIXTURES / "rules.yaml"),
        AGENTRT_MCP_SERVERS_FILE=str(servers),
        AGENTRT_REMOTE_AGENTS_ALLOWED_NETWORKS="127.0.0.0/8",
        AGENTRT_MCP_RETRY_MAX_SECONDS="1",
        PARTNER_TOKEN=TOKEN,
    )
    return env


@dataclass
class Sides:
    remote: Remote
    pool: WorkerPool
    settings: Settings
    address: str
    queue: str
    runtime: AgentRuntime
    workdir: Path

    def caller(
        self, digest: str, url: str | None = None, reserve: int | None = None
    ) -> WorkerProcess:
        """A caller worker whose servers file pins `digest` for the remote at `url`."""
        path = servers_file(self.workdir / f"servers-{uuid.uuid4().hex[:6]}.yaml",
                            url or self.remote.url, digest, reserve=reserve)  # fmt: skip
        return self.pool.spawn(caller_env(self.settings, self.address, self.queue, path))


@pytest_asyncio.fixture
async def sides(
    client: Client,
    temporal_env: WorkflowEnvironment,
    settings: Settings,
    pool: WorkerPool,
    runtime: AgentRuntime,
    task_queue: str,
    tmp_path: Path,
    second_database: str,
) -> AsyncIterator[Sides]:
    """Both sides; the remote on a migrated database of its own (tests/conftest.py)."""
    address = temporal_env.client.service_client.config.target_host
    async with remote_agentrt(client, address, settings, tmp_path, second_database) as remote:
        yield Sides(remote, pool, settings, address, task_queue, runtime, tmp_path)
