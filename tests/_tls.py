"""Certificates made in the test with `cryptography` (a CA, a server certificate, client
certificates), and the TLS context of a proxy that terminates TLS in front of the dev server
the way a Temporal cluster's load balancer does: h2 over ALPN, a client certificate
signed by the CA required."""

import contextlib
import datetime
import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from tests._proxy import FlakyProxy

_DAY = datetime.timedelta(days=1)


@dataclass(frozen=True)
class Pem:
    cert: str
    key: str

    def write(self, folder: Path, name: str) -> tuple[Path, Path]:
        cert, key = folder / f"{name}.crt", folder / f"{name}.key"
        cert.write_text(self.cert)
        key.write_text(self.key)
        key.chmod(0o600)
        return cert, key


def _key_pem(key: ec.EllipticCurvePrivateKey) -> str:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


class TestCA:
    """A CA that issues server and client certificates."""

    __test__ = False  # not a pytest class

    def __init__(self, name: str = "agentrt test CA") -> None:
        self._key = ec.generate_private_key(ec.SECP256R1())
        self._name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        now = datetime.datetime.now(datetime.UTC)
        self._cert = (
            x509.CertificateBuilder()
            .subject_name(self._name)
            .issuer_name(self._name)
            .public_key(self._key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - _DAY)
            .not_valid_after(now + 30 * _DAY)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(self._key, hashes.SHA256())
        )
        self.pem = self._cert.public_bytes(serialization.Encoding.PEM).decode()

    def issue(self, name: str, *, client: bool, expired: bool = False) -> Pem:
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        start, end = (now - 30 * _DAY, now - _DAY) if expired else (now - _DAY, now + 30 * _DAY)
        usage = ExtendedKeyUsageOID.CLIENT_AUTH if client else ExtendedKeyUsageOID.SERVER_AUTH
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
            .issuer_name(self._name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(start)
            .not_valid_after(end)
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        )
        if not client:
            builder = builder.add_extension(
                x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False
            )
        cert = builder.sign(self._key, hashes.SHA256())
        return Pem(cert.public_bytes(serialization.Encoding.PEM).decode(), _key_pem(key))


def terminating_context(ca: TestCA, server: Pem, folder: Path) -> ssl.SSLContext:
    """The proxy's side: serves `server`, advertises h2 only, requires a client
    certificate signed by `ca`."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    cert, key = server.write(folder, "proxy-server")
    ctx.load_cert_chain(cert, key)
    ctx.load_verify_locations(cadata=ca.pem)
    ctx.verify_mode = ssl.CERT_REQUIRED
    ctx.set_alpn_protocols(["h2"])
    return ctx


SERVER_NAME = "temporal.test"  # not the address dialled: the name setting must carry it


@dataclass
class Pki:
    ca: TestCA
    client: Pem
    cert: Path
    key: Path
    proxy: FlakyProxy

    def env(self, **extra: str) -> dict[str, str]:
        """The TLS settings: the CA as PEM text (as a secret store hands it over), the
        client certificate and key as files (as a mounted secret is)."""
        return {
            "AGENTRT_TEMPORAL_ADDRESS": f"127.0.0.1:{self.proxy.port}",
            "AGENTRT_TEMPORAL_TLS_CA": self.ca.pem,
            "AGENTRT_TEMPORAL_TLS_SERVER_NAME": SERVER_NAME,
            "AGENTRT_TEMPORAL_TLS_CERT": str(self.cert),
            "AGENTRT_TEMPORAL_TLS_KEY": str(self.key),
            **extra,
        }


@contextlib.contextmanager
def mtls_proxy(target: str, folder: Path) -> Iterator[Pki]:
    """A CA, a client certificate for it (files in `folder`), and a TLS-terminating proxy
    in front of `target` serving a certificate for SERVER_NAME."""
    ca = TestCA()
    client = ca.issue("worker-1", client=True)
    cert, key = client.write(folder, "client")
    host, port = target.rsplit(":", 1)
    tls = terminating_context(ca, ca.issue(SERVER_NAME, client=False), folder)
    proxy = FlakyProxy(host, int(port), tls=tls)
    proxy.start()
    try:
        yield Pki(ca, client, cert, key, proxy)
    finally:
        proxy.close()
