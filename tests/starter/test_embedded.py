"""`agentrt demo` as a user runs it: a subprocess with its own data directory and ports.
Whatever it started must be gone when it ends, whether it finished or was interrupted."""

import asyncio
import base64
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import httpx
import pytest
from google.protobuf import json_format
from rich.console import Console
from temporalio.api.common.v1 import Payload, Payloads

from agentrt.contracts.errors import ConfigError
from agentrt.core.codec import EncryptionCodec
from agentrt.core.devserver import free_port
from agentrt.workers.embedded import choose_port

SCRIPT = Path(sys.executable).parent / "agentrt"
COMMAND = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "agentrt.starter.cli"]


def demo_env(**extra: str) -> dict[str, str]:
    # The suite's own AGENTRT_* (a PostgreSQL URL, say) must not leak into the demo.
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRT_")}
    env["COLUMNS"] = "200"
    return {**env, **extra}


def processes_mentioning(marker: str) -> list[str]:
    """Live processes whose command line names `marker` (our unique data directory)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = next(
                ln for ln in (entry / "status").read_text().splitlines() if ln.startswith("State")
            )
        except (OSError, StopIteration):
            continue  # gone meanwhile
        if marker in cmdline and "zombie" not in state:
            found.append(f"{entry.name}: {cmdline}")
    return found


def wait_until(predicate: Callable[[], bool], within: float, what: str) -> None:
    deadline = time.monotonic() + within
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def assert_nothing_left(data_dir: Path) -> None:
    wait_until(lambda: not processes_mentioning(str(data_dir)), 5, "children to exit")


@pytest.fixture
def demo_dir(tmp_path: Path) -> Iterator[Path]:
    data_dir = tmp_path / "demo"
    yield data_dir
    # Should a test fail half-way, leave no dev server behind for the rest of the suite.
    for line in processes_mentioning(str(data_dir)):
        pid = int(line.split(":", 1)[0])
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


@dataclass
class Demo:
    proc: "subprocess.Popen[str]"
    port: int
    ui_port: int


def start_demo(
    data_dir: Path,
    *extra: str,
    stdout: int | IO[str] = subprocess.PIPE,
    env: dict[str, str] | None = None,
) -> Demo:
    port, ui_port = free_port(), free_port()
    args = ["demo", "--data-dir", str(data_dir), "--port", str(port), "--ui-port", str(ui_port)]
    proc = subprocess.Popen(
        [*COMMAND, *args, *extra],
        env=env or demo_env(),
        stdin=subprocess.PIPE,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # a terminal's Ctrl-C would hit the group; we signal it alone
    )
    return Demo(proc, port, ui_port)


def test_demo_runs_end_to_end_and_leaves_nothing_running(demo_dir: Path) -> None:
    # A deployment's Temporal TLS settings are for its address, not the demo's own
    # plaintext dev server, which it reaches without them.
    elsewhere = {"AGENTRT_TEMPORAL_TLS_CA": "/nowhere/ca.pem", "AGENTRT_TEMPORAL_API_KEY": "k"}
    demo = start_demo(demo_dir, env=demo_env(**elsewhere))
    out, err = demo.proc.communicate(timeout=100)
    assert demo.proc.returncode == 0, err
    assert "Traceback" not in err
    for kind in ("run_started", "llm", "tool", "approval_requested", "approval", "run_completed"):
        assert f" {kind} " in out, out
    assert "issue_refund(order_id=1042, amount_cents=4999" in out
    assert "Approved as demo-operator, automatically" in out
    assert "approved by demo-operator" in out
    assert "Outcome: COMPLETED (answered)" in out
    assert "Done: order 1042 was refunded. Refund #" in out
    assert f"Temporal Web: http://127.0.0.1:{demo.ui_port}/namespaces/default/workflows/" in out
    assert (demo_dir / "temporal.db").exists()
    assert_nothing_left(demo_dir)


def test_interactive_deny_goes_on_with_a_refusal(demo_dir: Path) -> None:
    demo = start_demo(demo_dir, "--interactive")
    out, err = demo.proc.communicate(input="n\n", timeout=100)
    assert demo.proc.returncode == 0, err
    assert "Approve these calls? [y/N]" in out
    assert "denied by demo-operator" in out
    assert "Denied by demo-operator" in out  # the refusal the model was given as the tool result
    assert "Outcome: COMPLETED" in out
    # The answer follows the denial: no refund is claimed.
    assert "I did not refund order 1042: the refund was not approved" in out
    assert "was refunded" not in out
    assert_nothing_left(demo_dir)


def test_sigint_while_the_dev_server_starts_stops_everything(demo_dir: Path) -> None:
    demo = start_demo(demo_dir)
    wait_until(
        lambda: any("start-dev" in p for p in processes_mentioning(str(demo_dir))),
        30,
        "the dev server to be spawned",
    )
    demo.proc.send_signal(signal.SIGINT)
    _, err = demo.proc.communicate(timeout=30)
    assert demo.proc.returncode == 130, err
    assert "SIGINT: stopping" in err and "Traceback" not in err
    assert_nothing_left(demo_dir)


def test_keep_running_serves_the_web_ui_until_sigterm(demo_dir: Path, tmp_path: Path) -> None:
    log = tmp_path / "demo.out"
    with log.open("w") as sink:
        demo = start_demo(demo_dir, "--keep-running", stdout=sink)
        wait_until(lambda: "press Ctrl-C to stop" in log.read_text(), 100, "the demo to finish")
    run_url = next(
        ln.split("Temporal Web: ", 1)[1].strip()
        for ln in log.read_text().splitlines()
        if ln.startswith("Temporal Web: ")
    )
    assert httpx.get(run_url, timeout=10).status_code == 200  # the UI really is up
    assert demo.proc.poll() is None
    demo.proc.send_signal(signal.SIGTERM)
    _, err = demo.proc.communicate(timeout=30)
    assert demo.proc.returncode == 0, err  # the demo run itself completed
    assert "SIGTERM: stopping" in err
    assert_nothing_left(demo_dir)
    with socket.socket() as s:  # the ports are free again
        s.bind(("127.0.0.1", demo.port))


def test_with_payload_keys_the_demo_serves_the_codec_for_the_ui_port_it_chose(
    demo_dir: Path, tmp_path: Path
) -> None:
    keys = "demo:" + base64.b64encode(b"d" * 32).decode()
    log = tmp_path / "demo.out"
    with log.open("w") as sink:
        demo = start_demo(
            demo_dir, "--keep-running", stdout=sink, env=demo_env(AGENTRT_PAYLOAD_KEYS=keys)
        )
        wait_until(lambda: "press Ctrl-C to stop" in log.read_text(), 100, "the demo to finish")
    try:
        codec_url = next(
            ln.split("Codec server: ", 1)[1].split()[0]
            for ln in log.read_text().splitlines()
            if ln.startswith("Codec server: ")
        )
        # The dev server's UI was pointed at it.
        assert any(
            f"--ui-codec-endpoint {codec_url}" in p for p in processes_mentioning(str(demo_dir))
        )
        ui = f"http://127.0.0.1:{demo.ui_port}"  # a free port, not the default 8233
        preflight = httpx.options(
            codec_url + "/default/decode",
            headers={
                "Origin": ui,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "content-type,x-namespace",
            },
            timeout=10,
        )
        assert preflight.status_code == 200
        assert preflight.headers["access-control-allow-origin"] == ui
        sealed = asyncio.run(
            EncryptionCodec.from_spec(keys).encode(
                [Payload(metadata={"encoding": b"json/plain"}, data=b'"hello"')]
            )
        )
        decoded = httpx.post(
            codec_url + "/default/decode",
            content=json_format.MessageToJson(Payloads(payloads=sealed)),
            headers={"Origin": ui, "content-type": "application/json"},
            timeout=10,
        )
        assert decoded.status_code == 200
        assert decoded.headers["access-control-allow-origin"] == ui
        assert json_format.Parse(decoded.text, Payloads()).payloads[0].data == b'"hello"'
    finally:
        demo.proc.send_signal(signal.SIGTERM)
        _, err = demo.proc.communicate(timeout=30)
    assert demo.proc.returncode == 0, err
    assert_nothing_left(demo_dir)


def test_busy_default_port_falls_back_and_says_so() -> None:
    err = Console(record=True, width=200)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = busy.getsockname()[1]
        chosen = choose_port(None, taken, "Temporal gRPC", err)
        assert chosen != taken
        assert f"Temporal gRPC port {taken} is busy; using {chosen} instead" in err.export_text()
        with pytest.raises(ConfigError, match="busy"):
            choose_port(taken, 7233, "Temporal gRPC", err)
