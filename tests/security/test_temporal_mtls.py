"""A Temporal frontend behind mTLS (a TLS-terminating proxy that requires a client
certificate, tests/_tls.py) lets no client in without a certificate its CA signed, and the
refusal tells the operator which setting is missing, not a bare transport error."""

import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from agentrt.contracts.errors import TemporalUnavailableError
from agentrt.core.settings import Settings
from agentrt.core.temporal import connect
from agentrt.core.temporal_diagnose import probe, speaks_tls
from agentrt.core.temporal_tls import temporal_access
from tests._proxy import FlakyProxy
from tests._tls import SERVER_NAME, Pki, TestCA, mtls_proxy, terminating_context


@pytest.fixture
def pki(temporal_env: WorkflowEnvironment, tmp_path: Path) -> Iterator[Pki]:
    with mtls_proxy(temporal_env.client.service_client.config.target_host, tmp_path) as made:
        yield made


def _through(pki: Pki, settings: Settings, **temporal: object) -> Settings:
    server = {"address": f"127.0.0.1:{pki.proxy.port}", "tls_ca": pki.ca.pem}
    return settings.replace(temporal={**server, "tls_server_name": SERVER_NAME, **temporal})


async def test_a_client_without_a_certificate_is_refused_with_a_clear_error(
    pki: Pki, settings: Settings
) -> None:
    with pytest.raises(TemporalUnavailableError) as err:
        await connect(_through(pki, settings))
    message = str(err.value)
    assert message.startswith(f"cannot reach Temporal at 127.0.0.1:{pki.proxy.port}")
    assert "it wants a client certificate (mTLS)" in message
    assert "AGENTRT_TEMPORAL_TLS_CERT" in message and "\n" not in message
    assert pki.proxy.accepted == 0  # nothing reached the frontend


async def test_a_certificate_from_another_ca_is_refused(
    pki: Pki, settings: Settings, tmp_path: Path
) -> None:
    stranger = TestCA("someone else's CA").issue("worker-1", client=True)
    with pytest.raises(TemporalUnavailableError, match="AGENTRT_TEMPORAL_TLS_CERT"):
        await connect(_through(pki, settings, tls_cert=stranger.cert, tls_key=stranger.key))
    assert pki.proxy.accepted == 0


async def test_a_plaintext_client_is_refused(pki: Pki, settings: Settings) -> None:
    plain = settings.replace(temporal={"address": f"127.0.0.1:{pki.proxy.port}"})
    with pytest.raises(TemporalUnavailableError, match="AGENTRT_TEMPORAL_TLS"):
        await connect(plain)
    assert pki.proxy.accepted == 0


async def test_the_right_certificate_gets_in(pki: Pki, settings: Settings) -> None:
    client = await connect(_through(pki, settings, tls_cert=str(pki.cert), tls_key=str(pki.key)))
    assert (await client.workflow_service.get_system_info(_req())).server_version
    assert pki.proxy.accepted >= 1


async def test_the_probe_reads_the_refusal_the_transport_may_not_name(
    pki: Pki, settings: Settings
) -> None:
    """Under TLS 1.3 the client ends its side of the handshake before the server checks for
    a certificate, so the Rust transport may report the refusal as a bare "transport
    error" (seen in CI under load). `connect` then asks with a handshake of its own: this
    proves that probe, against the same proxy, whatever the transport happened to say."""
    access = temporal_access(_through(pki, settings).temporal)
    found = await probe(f"127.0.0.1:{pki.proxy.port}", access)
    assert found.alert == "certificate required" and not found.accepted
    assert pki.proxy.accepted == 0


async def test_which_protocol_a_frontend_speaks_is_asked_when_the_transport_says_not(
    pki: Pki, temporal_env: WorkflowEnvironment
) -> None:
    """A plaintext client at a TLS frontend may meet only "operation was canceled" (seen in
    CI): connect then asks with a TLS handshake whether the frontend speaks TLS."""
    assert await speaks_tls(f"127.0.0.1:{pki.proxy.port}")
    assert not await speaks_tls(temporal_env.client.service_client.config.target_host)


async def test_the_probe_says_no_where_no_certificate_is_wanted(
    temporal_env: WorkflowEnvironment, settings: Settings, tmp_path: Path
) -> None:
    ca = TestCA()
    tls = terminating_context(ca, ca.issue(SERVER_NAME, client=False), tmp_path)
    tls.verify_mode = ssl.CERT_NONE  # TLS, but no client certificate asked for
    host, port = temporal_env.client.service_client.config.target_host.rsplit(":", 1)
    proxy = FlakyProxy(host, int(port), tls=tls)
    proxy.start()
    try:
        server = {"address": f"127.0.0.1:{proxy.port}", "tls_ca": ca.pem}
        open_tls = settings.replace(temporal={**server, "tls_server_name": SERVER_NAME})
        access = temporal_access(open_tls.temporal)
        found = await probe(f"127.0.0.1:{proxy.port}", access)
        assert found.alert is None and found.accepted and found.alpn == "h2"
        assert (await connect(open_tls)).namespace  # and a client gets in
    finally:
        proxy.close()


def _req() -> object:
    from temporalio.api.workflowservice.v1 import GetSystemInfoRequest

    return GetSystemInfoRequest()
