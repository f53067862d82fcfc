"""Real MCP test servers (server.py): a stdio child, or streamable HTTP on 127.0.0.1."""

import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from agentrt.core.devserver import free_port

ROOT = Path(__file__).resolve().parents[3]
MODULE = "tests.activities.mcp_servers.server"


def writes(counter: Path) -> list[dict[str, Any]]:
    """The server's own record of every write it performed."""
    if not counter.exists():
        return []
    return [json.loads(line) for line in counter.read_text().splitlines() if line]


def stdio_server(name: str, counter: Path, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "transport": "stdio",
        "command": sys.executable,
        "args": ["-m", MODULE, "--counter", str(counter), "stdio"],
        "cwd": str(ROOT),
        **extra,
    }


@dataclass
class HttpMcpServer:
    proc: subprocess.Popen[bytes]
    port: int
    counter: Path
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def config(self, name: str, **extra: Any) -> dict[str, Any]:
        return {"name": name, "transport": "http", "url": self.url, **extra}

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)


def start_http_server(workdir: Path, counter: Path, port: int | None = None) -> HttpMcpServer:
    port = port or free_port()
    log = workdir / f"mcp-http-{port}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", MODULE, "--counter", str(counter), "http", "--port", str(port)],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    server = HttpMcpServer(proc, port, counter, log)
    deadline = time.monotonic() + 60  # a bound, not a wait: at load 20 one took over 20 s
    while True:
        try:
            httpx.get(f"http://127.0.0.1:{port}/mcp", timeout=1)
            return server
        except httpx.TransportError:
            if proc.poll() is not None or time.monotonic() > deadline:
                server.stop()
                raise AssertionError(f"MCP HTTP server did not start:\n{log.read_text()}") from None
            time.sleep(0.1)
