"""Issue 40 (5): `agentrt-worker --check` prints the state of what a mistake silently turns
off: payload keys, the codec, Temporal TLS and who may start each profile. On cf842b3 it
printed none of them, and passed with payload encryption off."""

import base64
from collections.abc import Iterator
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from agentrt.api.settings import key_digest
from agentrt.core.settings import Settings
from agentrt.store.security.principals import PrincipalStore
from agentrt.workers.compose import WorkerResources
from tests._entry import run_module
from tests._tls import Pki, mtls_proxy
from tests.workers._proc import worker_env

KEYS = "p2:" + base64.b64encode(b"2" * 32).decode() + ",p1:" + base64.b64encode(b"1" * 32).decode()


@pytest.fixture
def pki(temporal_env: WorkflowEnvironment, tmp_path: Path) -> Iterator[Pki]:
    with mtls_proxy(temporal_env.client.service_client.config.target_host, tmp_path) as made:
        yield made


def _lines(stdout: str, prefix: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith(prefix)]


def test_check_prints_payload_codec_tls_and_grant_state(
    pki: Pki, settings: Settings, parts: WorkerResources, tmp_path: Path
) -> None:
    store = PrincipalStore(parts.ctx)
    alice, _ = store.create("alice-check", ["runs:start"], profiles=["supp*", "auto"])
    ops, _ = store.create("ops-check", ["admin"])
    reader, _ = store.create("reader-check", ["runs:read"], profiles=["*"])
    env = worker_env(settings, temporal_address="", task_queue="q") | pki.env(
        AGENTRT_PAYLOAD_KEYS=KEYS,
        AGENTRT_CODEC_TOKEN="decode-secret-xyz",
        AGENTRT_API_KEYS=f"bob={key_digest('k1')},carol={key_digest('k2')}",
        AGENTRT_API_KEY_PROFILES="bob=reader",
    )
    done = run_module("agentrt.workers", ("--check",), env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for secret in ("decode-secret-xyz", base64.b64encode(b"2" * 32).decode(), pki.client.key):
        assert secret not in out
    [payload] = _lines(out, "payload keys:")
    assert "active key 'p2'" in payload and "also decrypts p1" in payload
    assert "(AGENTRT_PAYLOAD_KEYS)" in payload
    [codec] = _lines(out, "codec:")
    assert "`agentrt codec-server` token set" in codec and "encode token not set" in codec
    [tls] = _lines(out, "temporal TLS:")
    assert "temporal TLS: on, CA CN=agentrt test CA" in tls
    assert "server name temporal.test" in tls and "client certificate CN=worker-1" in tls
    assert "no API key" in tls
    grants = {
        line.split(" may be started by ")[0].split(" (")[0]: line for line in _lines(out, "grants:")
    }
    support = grants["grants: profile support"]
    assert f"alice-check (token {alice.id})" in support and f"ops-check (token {ops.id})" in support
    assert reader.id not in support  # no runs:start
    # `auto` writes without approval: alice's exact grant covers it, no pattern would.
    auto = grants["grants: profile auto"]
    assert "(only an exact grant: it writes without approval)" in auto
    assert "alice-check" in auto
    assert "alice-check" not in grants["grants: profile reader"]
    assert "bob (A2A)" in grants["grants: profile reader"]  # named exactly
    assert "alice-check" not in grants["grants: profile stock-cli"]
    assert "grants: A2A callers in AGENTRT_API_KEYS with no profile: carol" in out
    assert out.index("temporal TLS:") < out.index("temporal: 127.0.0.1")


@pytest.mark.usefixtures("parts")
def test_check_says_plainly_when_payloads_are_not_encrypted(
    temporal_env: WorkflowEnvironment, settings: Settings, tmp_path: Path
) -> None:
    address = temporal_env.client.service_client.config.target_host
    env = worker_env(settings, temporal_address=address, task_queue="q")
    env["AGENTRT_DATA_DIR"] = str(tmp_path / "fresh")  # no payload.key from a demo there
    done = run_module("agentrt.workers", ("--check",), env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    [payload] = _lines(done.stdout, "payload keys:")
    assert payload.startswith("payload keys: NONE: Temporal holds prompts")
    assert "codec: none needed (payloads are not encrypted)" in done.stdout
    assert f"temporal TLS: off (plaintext to {address}), no API key" in done.stdout
