"""Any Temporal (issue 28): TLS, mTLS and API keys from AGENTRT_TEMPORAL_TLS* and
AGENTRT_TEMPORAL_API_KEY. The dev server has no TLS, so a proxy terminates TLS in front of
it (tests/_tls.py: h2 over ALPN, a client certificate required, certificates made here).
A run goes end to end through it, worker and CLI as users run them; a bad setting stops
each entry point at start with one line naming it."""

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from temporalio.service import TLSConfig
from temporalio.testing import WorkflowEnvironment

from agentrt.contracts.errors import ConfigError
from agentrt.core.settings import Settings, TemporalSettings
from agentrt.core.temporal_tls import temporal_access
from agentrt.starter.cli import main
from tests._entry import assert_one_line, run_module
from tests._tls import SERVER_NAME, Pki, mtls_proxy
from tests.workers._proc import WorkerPool, worker_env


@pytest.fixture
def pki(temporal_env: WorkflowEnvironment, tmp_path: Path) -> Iterator[Pki]:
    with mtls_proxy(temporal_env.client.service_client.config.target_host, tmp_path) as made:
        yield made


def _temporal(**fields: Any) -> TemporalSettings:
    return TemporalSettings(_env_file=None, **fields)


@pytest.mark.timeout(120)
@pytest.mark.usefixtures("parts")  # the database, migrated
async def test_a_run_goes_end_to_end_through_an_mtls_terminating_proxy(
    pki: Pki,
    settings: Settings,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    queue = f"tq-{uuid.uuid4().hex[:10]}"
    env = worker_env(settings, temporal_address="", task_queue=queue) | pki.env()
    pool = WorkerPool(tmp_path)
    worker = pool.spawn(env)
    try:
        for key, value in env.items():
            if key.startswith("AGENTRT_"):
                monkeypatch.setenv(key, value)
        monkeypatch.chdir(tmp_path)
        capsys.readouterr()
        code = await asyncio.to_thread(main, ["run", "auto", "Please refund order 1042"])
        out, err = capsys.readouterr()
        assert code == 0, err + worker.log_tail()
        assert "Outcome: COMPLETED (answered)" in out
        assert "Answer: Done: order 1042 was refunded in full" in out
    finally:
        pool.close()
    # Worker and CLI each reached Temporal only through the proxy, each with a certificate.
    assert pki.proxy.accepted >= 2
    assert "Traceback" not in worker.log_tail(10_000)


def test_paths_and_pem_text_are_both_read(pki: Pki) -> None:
    by_path = temporal_access(
        _temporal(tls_cert=str(pki.cert), tls_key=str(pki.key), tls_server_name=SERVER_NAME)
    )
    by_text = temporal_access(_temporal(tls_cert=pki.client.cert, tls_key=pki.client.key))
    assert isinstance(by_path.tls, TLSConfig) and isinstance(by_text.tls, TLSConfig)
    assert by_path.tls.client_cert == by_text.tls.client_cert
    assert by_path.tls.client_private_key == by_text.tls.client_private_key
    assert by_path.tls.domain == SERVER_NAME and by_path.tls.server_root_ca_cert is None
    # Nothing set: plaintext, as the dev server wants. An API key alone: TLS, system roots.
    assert temporal_access(_temporal()).tls is False
    cloud = temporal_access(_temporal(api_key="tc-key"))
    assert cloud.tls is True and cloud.api_key == "tc-key"
    assert temporal_access(_temporal(tls=True)).tls is True


def test_a_wrong_certificate_or_key_is_one_line_naming_the_setting(
    pki: Pki, tmp_path: Path
) -> None:
    other = pki.ca.issue("other", client=True)
    expired = pki.ca.issue("old", client=True, expired=True)
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a certificate\n")
    cases: list[tuple[dict[str, object], str]] = [
        ({"tls_ca": str(tmp_path / "missing.pem")}, "AGENTRT_TEMPORAL_TLS_CA: cannot read"),
        ({"tls_ca": str(garbage)}, "AGENTRT_TEMPORAL_TLS_CA: not a PEM certificate"),
        ({"tls_cert": str(pki.cert)}, "AGENTRT_TEMPORAL_TLS_KEY is not set"),
        ({"tls_key": str(pki.key)}, "AGENTRT_TEMPORAL_TLS_CERT is not set"),
        ({"tls_cert": str(garbage), "tls_key": str(pki.key)}, "AGENTRT_TEMPORAL_TLS_CERT: not"),
        ({"tls_cert": str(pki.cert), "tls_key": pki.client.cert}, "AGENTRT_TEMPORAL_TLS_KEY: not"),
        (
            {"tls_cert": str(pki.cert), "tls_key": other.key},
            "AGENTRT_TEMPORAL_TLS_KEY: the key is not the one of the certificate",
        ),
        ({"tls_cert": expired.cert, "tls_key": expired.key}, "AGENTRT_TEMPORAL_TLS_CERT: the"),
        ({"api_key": " "}, "AGENTRT_TEMPORAL_API_KEY is empty"),
    ]
    for fields, message in cases:
        with pytest.raises(ConfigError) as err:
            temporal_access(_temporal(**fields))
        assert str(err.value).startswith(message), (fields, str(err.value))
        assert "\n" not in str(err.value)
    with pytest.raises(ConfigError, match="expired on"):
        temporal_access(_temporal(tls_cert=expired.cert, tls_key=expired.key))


@pytest.mark.parametrize("module,prog", [
    ("agentrt.workers", "agentrt-worker"),
    ("agentrt.api.main", "agentrt-api"),
    ("agentrt.starter.cli", "agentrt"),
])  # fmt: skip
def test_each_entry_point_refuses_a_mismatched_key_at_start(
    pki: Pki, settings: Settings, tmp_path: Path, module: str, prog: str
) -> None:
    env = worker_env(settings, temporal_address="", task_queue="q") | pki.env(
        AGENTRT_TEMPORAL_TLS_KEY=pki.ca.issue("other", client=True).key, AGENTRT_API_PORT="1"
    )
    args = {"agentrt.api.main": ("serve",), "agentrt.starter.cli": ("status", str(uuid.uuid4()))}
    done = run_module(module, args.get(module, ()), env=env, cwd=tmp_path)
    assert_one_line(done, prog, "AGENTRT_TEMPORAL_TLS_KEY", "not the one of the certificate")
    assert pki.proxy.accepted == 0  # refused before any connection


async def test_an_untrusted_server_or_wrong_name_names_the_setting(
    pki: Pki, settings: Settings
) -> None:
    from agentrt.contracts.errors import TemporalUnavailableError
    from agentrt.core.temporal import connect

    base = {"address": f"127.0.0.1:{pki.proxy.port}", "tls_cert": str(pki.cert)}
    base["tls_key"] = str(pki.key)
    for extra, hint in (
        ({"tls_server_name": SERVER_NAME}, "AGENTRT_TEMPORAL_TLS_CA"),  # system roots
        ({"tls_ca": pki.ca.pem}, "AGENTRT_TEMPORAL_TLS_SERVER_NAME"),  # 127.0.0.1 is not it
    ):
        with pytest.raises(TemporalUnavailableError) as err:
            await connect(settings.replace(temporal=base | extra))
        assert hint in str(err.value), str(err.value)


@pytest.mark.usefixtures("parts")  # the database, migrated
def test_worker_check_reaches_temporal_through_the_proxy(
    pki: Pki, settings: Settings, tmp_path: Path
) -> None:
    env = worker_env(settings, temporal_address="", task_queue="q") | pki.env()
    done = run_module("agentrt.workers", ("--check",), env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"temporal: 127.0.0.1:{pki.proxy.port} namespace default" in done.stdout
    assert pki.proxy.accepted >= 1
