"""`agentrt-api --check` (issue 40 item 5, as the worker's `--check`): the API's settings
state (who may call it, payload keys and the codec, TLS to Temporal, the database) printed
one line each without starting the server or changing anything; a setting the API would
refuse to start with is the same one line and exit 2. Before, the API had no `--check`."""

import base64
import os
import socket
import subprocess
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from agentrt.api.settings import key_digest
from agentrt.core.devserver import port_is_free
from agentrt.core.settings import Settings
from agentrt.store.security.principals import PrincipalStore
from agentrt.workers.compose import WorkerResources
from tests._entry import assert_one_line, run_module

KEYS = "p2:" + base64.b64encode(b"2" * 32).decode() + ",p1:" + base64.b64encode(b"1" * 32).decode()


def _check(
    settings: Settings, cwd: Path, address: str, **more: str
) -> subprocess.CompletedProcess[str]:
    """`agentrt-api --check` with the suite's database and keys, `more` on top."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("AGENTRT_")}
    env = {
        **clean,
        "AGENTRT_SEAL_KEYS": settings.read_seal_keys(),
        "AGENTRT_DATABASE_URL": settings.database.resolved_url(),
        "AGENTRT_DATA_DIR": str(cwd / "data"),
        "AGENTRT_TEMPORAL_ADDRESS": address,
        **more,
    }
    env = {k: v for k, v in env.items() if v != "-"}  # "-": left unset
    return run_module("agentrt.api.main", ("--check",), env=env, cwd=cwd)


def test_check_prints_the_apis_state_and_starts_nothing(
    temporal_env: WorkflowEnvironment, settings: Settings, parts: WorkerResources, tmp_path: Path
) -> None:
    store = PrincipalStore(parts.ctx)
    store.create("ops-apicheck", ["admin"])
    store.create("reader-apicheck", ["runs:read"])
    address = temporal_env.client.service_client.config.target_host
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    done = _check(
        settings, tmp_path, address,
        AGENTRT_API_PORT=str(port),
        AGENTRT_PAYLOAD_KEYS=KEYS,
        AGENTRT_CODEC_TOKEN="decode-secret-xyz",
        AGENTRT_API_KEYS=f"bob={key_digest('k1')},carol={key_digest('k2')}",
        AGENTRT_API_KEY_PROFILES="bob=reader|supp*",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for secret in ("decode-secret-xyz", base64.b64encode(b"2" * 32).decode(), key_digest("k1")):
        assert secret not in out
    assert f"api: listens on 127.0.0.1:{port}, public URL http://127.0.0.1:{port}" in out
    assert "auth: A2A callers by API key: bob may start reader|supp*, carol starts nothing" in out
    [operators] = [ln for ln in out.splitlines() if ln.startswith("auth: operator API:")]
    assert "active tokens of" in operators and "ops-apicheck" in operators  # admin named
    assert "reader-apicheck" not in operators
    assert "payload keys: active key 'p2', also decrypts p1 (AGENTRT_PAYLOAD_KEYS)" in out
    assert "codec: agentrt-api serves /codec" in out
    assert "database " in out and ": schema present" in out
    assert f"temporal TLS: off (plaintext to {address}), no API key" in out
    assert f"temporal: {address} namespace default" in out
    assert port_is_free(port)  # the check served nothing (and exited)
    assert not (tmp_path / "data").exists()  # no key file, no data directory made


def test_check_says_when_a2a_is_closed_and_payloads_are_clear(
    temporal_env: WorkflowEnvironment, settings: Settings, tmp_path: Path
) -> None:
    address = temporal_env.client.service_client.config.target_host
    fresh = tmp_path / "fresh.db"
    done = _check(settings, tmp_path, address, AGENTRT_DATABASE_URL=f"sqlite:///{fresh}")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "auth: A2A: no API keys (AGENTRT_API_KEYS): every A2A request is refused" in out
    assert "payload keys: NONE: Temporal holds prompts" in out
    assert "no file yet (the API creates it and its schema at start)" in out
    assert "auth: operator API: no token yet" in out
    assert not fresh.exists()  # probed, not created


@pytest.mark.timeout(240)  # three processes, each importing the package on a loaded machine
def test_check_refuses_what_the_api_would_refuse_in_one_line(
    temporal_env: WorkflowEnvironment, settings: Settings, tmp_path: Path
) -> None:
    address = temporal_env.client.service_client.config.target_host
    bad_keys = _check(settings, tmp_path, address, AGENTRT_API_KEYS="bob=short")
    assert_one_line(bad_keys, "agentrt-api", "AGENTRT_API_KEYS")
    fresh = tmp_path / "fresh.db"
    no_schema = _check(
        settings, tmp_path, address,
        AGENTRT_DATABASE_URL=f"sqlite:///{fresh}", AGENTRT_API_MIGRATE="false",
    )  # fmt: skip
    assert_one_line(no_schema, "agentrt-api", "no agentrt schema", "AGENTRT_API_MIGRATE")
    no_key = _check(settings, tmp_path, address, AGENTRT_SEAL_KEYS="-")
    assert_one_line(no_key, "agentrt-api", "no seal key", "AGENTRT_SEAL_KEYS")
    assert not fresh.exists()
