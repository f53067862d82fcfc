"""The team demo's remote agent: a second agentrt, as a partner would run it. Its own
database (under the demo's data directory, `remote/`), its own worker (in this process, on
its own task queue) serving the published profile `quote`, and `agentrt-api serve` in a
process of its own on a free loopback port. The caller gets a `RemoteAgent` whose card
digest is pinned to the card the API serves and whose token is a file of its own."""

import asyncio
import contextlib
import os
import secrets
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
from rich.console import Console
from temporalio.client import Client

from agentrt.activities.toolbox.remote_config import RemoteAgent, RemoteSkill, card_digest
from agentrt.activities.toolbox.remote_http import CARD_PATH, canonical
from agentrt.api.settings import key_digest
from agentrt.contracts.enums import ToolEffect
from agentrt.contracts.errors import AgentRuntimeError
from agentrt.contracts.profiles import Profile
from agentrt.core.devserver import free_port
from agentrt.core.private import private_dir
from agentrt.core.settings import Settings
from agentrt.store.a2a.tasks import A2AStore
from agentrt.workers._demo_server import stop_group
from agentrt.workers.builder import make_worker
from agentrt.workers.compose import WorkerResources, build
from agentrt.workers.demo_common import prepare_data

AGENT = "carrier"  # the caller's name for the remote agent: its tools are `carrier.<skill>`
SKILL = "quote"  # the remote's published profile, a skill of its card
TOOL = f"{AGENT}.{SKILL}"
CALLER = "demo-triage"  # the caller's identity at the remote's API
CARD_SECONDS = 60.0
QUOTE_SCHEMA = {
    "type": "object",
    "required": ["order_id", "total_cents"],
    "properties": {"order_id": {"type": "string"}, "total_cents": {"type": "integer"}},
}


class RemoteSideError(AgentRuntimeError):
    """The demo's remote agent did not come up."""


@dataclass
class RemoteSide:
    agent: RemoteAgent
    url: str
    store: A2AStore
    log: Path  # the remote API's log: its access lines count the requests it answered

    def tasks(self) -> int:
        """How many A2A tasks the caller's identity made on the remote."""
        return self.store.page(owner=CALLER).total


def quote_profile() -> Profile:
    return Profile(
        name=SKILL,
        description="Quotes return shipping for an order, as JSON.",
        instructions="You quote return shipping for orders.",
        model="scripted:demo",
        approval="none",  # it only answers; nothing it does writes
        publish=True,
        privacy="full",
    )


@contextlib.asynccontextmanager
async def remote_side(
    client: Client, settings: Settings, out: Console
) -> AsyncIterator[RemoteSide]:
    home = settings.database.data_dir / "remote"
    private_dir(home)
    own = settings.replace(
        database={"data_dir": home, "url": ""},
        # The Temporal the client reaches, whatever the settings say (the bench's own).
        temporal={
            "task_queue": f"{settings.temporal.task_queue}-remote",
            "address": client.service_client.config.target_host,
        },
    )
    await asyncio.to_thread(prepare_data, own)
    token = secrets.token_urlsafe(24)
    token_file = _secret_file(home / "caller.token", token)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    # Given its resources, the remote's worker runs no retention or routed worker beside it:
    # those are this process's main worker's, one per queue.
    with build(own, profiles=[quote_profile()]) as resources:
        async with make_worker(client, resources, own):
            env = api_env(own, port, caller=CALLER, digest=key_digest(token), profiles=SKILL)
            proc = await _spawn_api(env, home / "api.log")
            try:
                digest = await _card_digest(url, proc, home / "api.log")
                out.print(
                    f"Remote agent {AGENT!r}: agentrt-api at {url} (pid {proc.pid}, its own "
                    f"database and worker), card pinned at {digest}",
                    markup=False,
                    highlight=False,
                    soft_wrap=True,
                )
                skill = RemoteSkill(effect=ToolEffect.READ_ONLY, output_schema=QUOTE_SCHEMA)
                agent = RemoteAgent(
                    name=AGENT, url=url, token_file=token_file,
                    pinned_card_digest=digest, skills={SKILL: skill}, timeout_seconds=60,
                )  # fmt: skip
                yield RemoteSide(agent, url, A2AStore(resources.ctx), home / "api.log")
            finally:
                await stop_group(proc)


async def offered(resources: WorkerResources, tool: str, within: float = CARD_SECONDS) -> None:
    """Wait until the caller's worker offers `tool`: a remote agent's skills are listed
    once the worker runs (its card fetched and checked), not when it is built."""
    deadline = asyncio.get_running_loop().time() + within
    while resources.registry is None or resources.registry.get(tool) is None:
        if asyncio.get_running_loop().time() > deadline:
            raise RemoteSideError(f"the worker does not offer {tool!r} (is the card pinned?)")
        await asyncio.sleep(0.05)


def _secret_file(path: Path, value: str) -> Path:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(value)
    return path


def api_env(own: Settings, port: int, *, caller: str, digest: str, profiles: str) -> dict[str, str]:
    """The environment of an `agentrt-api serve` on `port` for a remote agentrt of settings
    `own`: its database, queue and keys; the key of digest `digest` is `caller`'s, which may
    start only `profiles`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRT_")}
    keys = own.privacy.payload_keys
    env.update(
        AGENTRT_DATABASE_URL=own.database.resolved_url(),
        AGENTRT_DATA_DIR=str(own.database.data_dir),
        AGENTRT_SEAL_KEYS=own.read_seal_keys(),
        AGENTRT_TEMPORAL_ADDRESS=own.temporal.address,
        AGENTRT_TASK_QUEUE=own.temporal.task_queue,
        AGENTRT_API_HOST="127.0.0.1",
        AGENTRT_API_PORT=str(port),
        AGENTRT_API_PUBLIC_URL=f"http://127.0.0.1:{port}",
        AGENTRT_API_KEYS=f"{caller}={digest}",
        AGENTRT_API_KEY_PROFILES=f"{caller}={profiles}",
        AGENTRT_API_POLL_SECONDS="0.05",
        PYTHONUNBUFFERED="1",
    )
    if keys is not None:
        env["AGENTRT_PAYLOAD_KEYS"] = keys.get_secret_value()
    else:  # as the caller's own Temporal client (the bench's, say): payloads in the clear
        env["AGENTRT_ALLOW_PLAINTEXT_HISTORY"] = "true"
    return env


async def _spawn_api(env: dict[str, str], log: Path) -> asyncio.subprocess.Process:
    with log.open("wb") as sink:
        return await asyncio.create_subprocess_exec(
            sys.executable, "-m", "agentrt.api.main", "serve",
            env=env, stdin=asyncio.subprocess.DEVNULL, stdout=sink, stderr=sink,
            start_new_session=True,  # its own group: stop_group ends it and what it spawned
        )  # fmt: skip


async def _card_digest(url: str, proc: asyncio.subprocess.Process, log: Path) -> str:
    """The digest of the card the API serves once its worker registered `quote`: pinned
    here as an operator pins it after reviewing the card."""
    deadline = asyncio.get_running_loop().time() + CARD_SECONDS
    async with httpx.AsyncClient(timeout=5) as http:
        while asyncio.get_running_loop().time() < deadline:
            if proc.returncode is not None:
                text = await asyncio.to_thread(log.read_text, errors="replace")
                tail = text.strip().splitlines()[-3:]
                raise RemoteSideError(f"the remote agentrt-api exited (log {log}): {tail}")
            with contextlib.suppress(httpx.TransportError):
                reply = await http.get(f"{url}/{CARD_PATH}")
                card = reply.json() if reply.status_code == 200 else {}
                if any(s.get("id") == SKILL for s in card.get("skills", [])):
                    return card_digest(canonical(card))
            await asyncio.sleep(0.2)
    raise RemoteSideError(f"the remote agentrt-api served no card with {SKILL!r} (log {log})")
