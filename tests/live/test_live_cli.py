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


async def _read_until(fd: int, wanted: bytes, seen: bytearray, within: float) -> None:
    async def read() -> None:
        while wanted not in seen:
            try:
                chunk = await asyncio.to_thread(os.read, fd, 4096)
            except OSError:  # EIO: the terminal's other end closed (the CLI exited)
                return
            if not chunk:
                return
            seen.extend(chunk)

    await asyncio.wait_for(read(), within)


async def test_agentrt_run_prints_tokens_as_they_arrive(
    serve_streaming: Serve, tmp_path: Path
) -> None:
    script = ["Hello ", "from ", GATE, "the ", "stream.", 0.3]
    async with serve_streaming(script) as (live, server):
        secret = token(live, name("alice"), "runs:start", "runs:read")
        env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRT_")}
        env.update(AGENTRT_API_URL=live.url, AGENTRT_API_TOKEN=secret,
                   AGENTRT_DATA_DIR=str(tmp_path), COLUMNS="200")  # fmt: skip
        terminal, tty = pty.openpty()
        cli = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "agentrt.starter.cli", "run", "streamer", "Say hello",
            stdout=tty, stderr=asyncio.subprocess.PIPE, env=env, cwd=tmp_path,
        )  # fmt: skip
        os.close(tty)
        seen = bytearray()
        try:
            await _read_until(terminal, b"Hello from ", seen, within=60)
            # On the terminal while the provider is held at the gate: the call is running.
            assert b"Hello from " in seen, seen.decode(errors="replace")
            assert not server.gate.is_set()
            server.gate.set()
            await _read_until(terminal, b"\x00never", seen, within=60)  # to the end
            _, err = await asyncio.wait_for(cli.communicate(), 30)
        finally:
            os.close(terminal)
            if cli.returncode is None:
                cli.kill()
    text = seen.decode(errors="replace")
    assert cli.returncode == 0, err.decode()
    assert "Hello from the stream.\r\n" in text  # streamed, then the line ended
