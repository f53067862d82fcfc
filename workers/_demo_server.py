"""The demo's own Temporal dev server: started, waited for until it answers, and stopped
with its whole process group."""

import asyncio
import contextlib
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path

from rich.console import Console
from temporalio.client import Client

from agentrt.contracts.errors import AgentRuntimeError, TemporalUnavailableError
from agentrt.core.devserver import start_dev_server, wait_for_port
from agentrt.core.settings import Settings
from agentrt.core.temporal import connect

STARTUP_SECONDS = 60.0
STOP_SECONDS = 10.0


class DevServerError(AgentRuntimeError):
    """The embedded Temporal dev server did not come up."""


@contextlib.asynccontextmanager
async def dev_server(
    port: int, ui_port: int, data_dir: Path, out: Console, codec_url: str | None = None
) -> AsyncIterator[None]:
    log = data_dir / "temporal.log"
    proc = await start_dev_server(
        port=port,
        ui_port=ui_port,
        db_file=data_dir / "temporal.db",
        log=log,
        codec_endpoint=codec_url,
    )
    try:
        await _until_ready(proc, port, log)
        out.print(
            f"Temporal dev server: 127.0.0.1:{port}, Web UI http://127.0.0.1:{ui_port} "
            f"(pid {proc.pid}, log {log})",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        yield
    finally:
        await stop_group(proc)


async def _until_ready(proc: asyncio.subprocess.Process, port: int, log: Path) -> None:
    opened = asyncio.create_task(wait_for_port(port, within=STARTUP_SECONDS))
    exited = asyncio.create_task(proc.wait())
    try:
        await asyncio.wait({opened, exited}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for t in (opened, exited):
            t.cancel()
    if exited.done() and not exited.cancelled():
        tail = _tail(log)
        raise DevServerError(
            f"the Temporal dev server exited with code {exited.result()} (log {log}){tail}"
        )
    if opened.exception() is not None:
        raise DevServerError(f"the Temporal dev server did not open port {port} (log {log})")


def _tail(log: Path) -> str:
    try:
        lines = [ln for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return ""
    return f": {lines[-1][:300]}" if lines else ""


async def connect_when_ready(settings: Settings) -> Client:
    """The port opens a moment before the frontend answers: retry briefly."""
    for attempt in range(40):
        try:
            return await connect(settings)
        except TemporalUnavailableError:
            if attempt == 39:
                raise DevServerError(
                    f"the dev server at {settings.temporal.address} does not answer"
                ) from None
            await asyncio.sleep(0.25)
    raise AssertionError("unreachable")


def _signal_group(proc: asyncio.subprocess.Process, sig: signal.Signals) -> None:
    # The dev server runs in its own session, so its pid is its process group's id; the
    # group also takes any child it spawned.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)


async def stop_group(proc: asyncio.subprocess.Process, grace_seconds: float = STOP_SECONDS) -> None:
    _signal_group(proc, signal.SIGTERM)
    try:
        await asyncio.wait_for(proc.wait(), grace_seconds)
    except TimeoutError:
        _signal_group(proc, signal.SIGKILL)
        await proc.wait()
    except asyncio.CancelledError:
        _signal_group(proc, signal.SIGKILL)  # no time left to be polite: never leak it
        raise
    _signal_group(proc, signal.SIGKILL)  # stragglers left in the group by the leader
