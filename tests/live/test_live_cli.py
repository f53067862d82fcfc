"""`agentrt run` on a terminal (a pty) prints the model's tokens while the call is running,
through the operator API, as a user's shell would show them."""

import asyncio
import os
import pty
import sys
from pathlib import Path

from bench.streaming_server import GATE
from tests.api.ops_helpers import name, token
from tests.live.conftest import Serve


def _pump(fd: int, seen: bytearray) -> None:
    """Everything the terminal shows, into `seen`, until the CLI's end closes it."""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: the terminal's other end closed (the CLI exited)
            return
        if not chunk:
            return
        seen.extend(chunk)


async def _shown(seen: bytearray, wanted: bytes, within: float) -> bool:
    for _ in range(int(within / 0.02)):
        if wanted in seen:
            return True
        await asyncio.sleep(0.02)
    return wanted in seen


async def _run_on_a_terminal(
    serve: Serve, tmp_path: Path, *flags: str, wanted: bytes, within: float
) -> tuple[bytes, bytes, int | None, bool]:
    """`agentrt --api ... run streamer` on a pty, its provider held at the gate until
    `wanted` shows on the terminal (or `within` passes); what the terminal showed by then,
    all it showed, the exit code and whether the gate was still closed at that point."""
    script = ["Hello ", "from ", GATE, "the ", "stream.", 0.3]
    async with serve(script) as (live, server):
        secret = token(live, name("alice"), "runs:start", "runs:read")
        env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRT_")}
        env.update(AGENTRT_API_URL=live.url, AGENTRT_API_TOKEN=secret,
                   AGENTRT_DATA_DIR=str(tmp_path), COLUMNS="200")  # fmt: skip
        terminal, tty = pty.openpty()
        cli = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "agentrt.starter.cli", "run", "streamer", "Say hello",
            *flags, stdout=tty, stderr=asyncio.subprocess.PIPE, env=env, cwd=tmp_path,
        )  # fmt: skip
        os.close(tty)
        seen = bytearray()
        pump = asyncio.create_task(asyncio.to_thread(_pump, terminal, seen))
        try:
            await _shown(seen, wanted, within)
            before, held = bytes(seen), not server.gate.is_set()
            server.gate.set()
            _, err = await asyncio.wait_for(cli.communicate(), 60)
            await asyncio.wait_for(pump, 10)  # the rest of what it showed
        finally:
            if cli.returncode is None:
                cli.kill()
            os.close(terminal)
    assert cli.returncode == 0, err.decode()
    return before, bytes(seen), cli.returncode, held


async def test_agentrt_run_prints_tokens_as_they_arrive(
    serve_streaming: Serve, tmp_path: Path
) -> None:
    before, text, _, held = await _run_on_a_terminal(
        serve_streaming, tmp_path, wanted=b"Hello from ", within=60
    )
    # On the terminal while the provider is held at the gate: the call is running.
    assert b"Hello from " in before and held, before.decode(errors="replace")
    assert b"Hello from the stream.\r\n" in text  # streamed, then the line ended


async def test_no_stream_prints_nothing_before_the_run_ends(
    serve_streaming: Serve, tmp_path: Path
) -> None:
    before, text, _, held = await _run_on_a_terminal(
        serve_streaming, tmp_path, "--no-stream", wanted=b"Hello", within=2.0
    )
    assert held and b"Hello" not in before
    assert b"Hello from the stream." in text  # the summary after the run
