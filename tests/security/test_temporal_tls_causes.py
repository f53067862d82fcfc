"""Issue 40 (5): each TLS failure names its real cause. On cf842b3 a TLS terminator without
HTTP/2 over ALPN was reported as a refused client certificate, and an API key sent to a
plaintext port (or TLS at one) as "set AGENTRT_TEMPORAL_ADDRESS"; a client certificate
from an unknown CA and one the server refused read the same.

Every frontend here is a TLS-terminating proxy of our own in front of the dev server
(tests/_tls.py), with certificates made in the test. Each cause is checked twice: through
`connect` as a user meets it, and through the probe alone with no transport text, so the
words do not depend on what the Rust transport happened to report."""

import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

import pytest
from temporalio.testing import WorkflowEnvironment

from agentrt.contracts.errors import TemporalUnavailableError
from agentrt.core.settings import Settings
from agentrt.core.temporal import connect
from agentrt.core.temporal_diagnose import explain, probe
from agentrt.core.temporal_tls import temporal_access
from tests._proxy import FlakyProxy
from tests._tls import SERVER_NAME, Pem, TestCA, terminating_context


@contextmanager
def _frontend(
    target: str, ca: TestCA, folder: Path, *, alpn: list[str] | None = None, optional: bool = False
) -> Iterator[str]:
    ctx = terminating_context(ca, ca.issue(SERVER_NAME, client=False), folder)
    if alpn is not None:
        ctx.set_alpn_protocols(alpn)
    if optional:
        ctx.verify_mode = ssl.CERT_OPTIONAL  # asks for a certificate, checks one if shown
    host, port = target.rsplit(":", 1)
    proxy = FlakyProxy(host, int(port), tls=ctx)
    proxy.start()
    try:
        yield f"127.0.0.1:{proxy.port}"
    finally:
        proxy.close()


def _target(env: WorkflowEnvironment) -> str:
    return env.client.service_client.config.target_host


async def _refusal(settings: Settings, **temporal: Any) -> str:
    """The one-line error `connect` raises, and the same cause found by the probe alone."""
    changed = settings.replace(temporal=temporal)
    with pytest.raises(TemporalUnavailableError) as err:
        await connect(changed)
    message = str(err.value)
    assert "\n" not in message and "set AGENTRT_TEMPORAL_ADDRESS to a running" not in message
    access = temporal_access(changed.temporal)
    alone = explain(await probe(temporal["address"], access), access, "")
    assert alone is not None and message.endswith(alone), (message, alone)
    return message


def _mtls(address: str, ca: TestCA, client: Pem) -> dict[str, Any]:
    """The Temporal settings of a client of the frontend at `address`: `ca` trusted,
    `client`'s certificate shown."""
    return {
        "address": address, "tls_ca": ca.pem, "tls_server_name": SERVER_NAME,
        "tls_cert": client.cert, "tls_key": client.key,
    }  # fmt: skip


class MtlsRefusal(Protocol):
    async def __call__(self, ca: TestCA, client: Pem, **frontend: Any) -> str: ...


@pytest.fixture
def mtls_refusal(
    temporal_env: WorkflowEnvironment, settings: Settings, tmp_path: Path
) -> MtlsRefusal:
    """`_refusal` of a `_frontend(**frontend)` of the dev server, trusting `ca`, shown
    `client`'s certificate."""

    async def refusal(ca: TestCA, client: Pem, **frontend: Any) -> str:
        with _frontend(_target(temporal_env), ca, tmp_path, **frontend) as address:
            return await _refusal(settings, **_mtls(address, ca, client))

    return refusal


async def test_a_terminator_without_alpn_h2_is_named(mtls_refusal: MtlsRefusal) -> None:
    ca = TestCA()
    client = ca.issue("worker-1", client=True)
    # A terminator that speaks only HTTP/1.1 over ALPN, and one that does no ALPN at all.
    for alpn in (["http/1.1"], []):
        message = await mtls_refusal(ca, client, alpn=alpn)
        assert "its TLS frontend offers no protocol over ALPN" in message, message
        assert "gRPC needs HTTP/2 (ALPN h2)" in message
        assert "client certificate" not in message


@pytest.mark.parametrize("optional", [False, True], ids=["required", "requested"])
async def test_a_client_certificate_from_an_unknown_ca_is_named(
    mtls_refusal: MtlsRefusal, optional: bool
) -> None:
    ca = TestCA()
    stranger = TestCA("someone else's CA").issue("worker-1", client=True)
    message = await mtls_refusal(ca, stranger, optional=optional)
    assert "it does not trust the CA that issued the client certificate" in message
    assert "AGENTRT_TEMPORAL_TLS_CERT" in message


async def test_a_client_certificate_the_server_does_not_accept_is_named(
    mtls_refusal: MtlsRefusal,
) -> None:
    """Its CA is trusted, but it is a server certificate (no clientAuth key usage)."""
    ca = TestCA()
    wrong_use = ca.issue("worker-1.internal", client=False)
    message = await mtls_refusal(ca, wrong_use)
    assert "it did not accept the client certificate in AGENTRT_TEMPORAL_TLS_CERT" in message
    assert "unsupported certificate" in message and "its CA is trusted" in message


async def test_an_api_key_is_never_sent_to_a_plaintext_port_and_the_error_says_so(
    temporal_env: WorkflowEnvironment, settings: Settings
) -> None:
    message = await _refusal(settings, address=_target(temporal_env), api_key="tc-secret-key")
    assert "it does not speak TLS, and an API key is only ever sent over TLS" in message
    assert "AGENTRT_TEMPORAL_API_KEY" in message and "tc-secret-key" not in message
    message = await _refusal(settings, address=_target(temporal_env), tls=True)
    assert "it speaks plaintext, not TLS" in message


async def test_the_right_settings_get_through_the_same_frontend(
    temporal_env: WorkflowEnvironment, settings: Settings, tmp_path: Path
) -> None:
    """The probe says nothing is wrong where nothing is: no false cause."""
    ca = TestCA()
    client = ca.issue("worker-1", client=True)
    with _frontend(_target(temporal_env), ca, tmp_path) as address:
        good = settings.replace(temporal=_mtls(address, ca, client))
        assert (await connect(good)).namespace == "default"
        access = temporal_access(good.temporal)
        found = await probe(address, access)
        assert found.accepted and found.alpn == "h2" and explain(found, access) is None
