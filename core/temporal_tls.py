"""TLS, mTLS and API keys for the Temporal connection (issue 28): the `AGENTRT_TEMPORAL_TLS*`
and `AGENTRT_TEMPORAL_API_KEY` settings, read and checked before a connection is tried, so
a wrong file, a certificate that is not one, a key that is not the certificate's or an
expired certificate stops the process at start with one line naming the setting. A
handshake the server refuses is told apart too (`handshake_hint`)."""

import asyncio
import datetime
import ssl
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from temporalio.service import TLSConfig

from agentrt.contracts.errors import ConfigError
from agentrt.core.settings_base import env_name
from agentrt.core.settings_process import TemporalSettings

_PEM = "-----BEGIN"


def _setting(field: str) -> str:
    return env_name(TemporalSettings, field)


def _pem(field: str, value: str) -> bytes:
    """The PEM a setting holds: its text, or the file it names."""
    if value.lstrip().startswith(_PEM):
        return value.strip().encode() + b"\n"
    path = Path(value).expanduser()
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ConfigError(
            f"{_setting(field)}: cannot read {path} ({exc.strerror or exc}); give a path or "
            "the PEM text"
        ) from None


def _certificates(field: str, value: str) -> tuple[bytes, list[x509.Certificate]]:
    data = _pem(field, value)
    try:
        certs = x509.load_pem_x509_certificates(data)
    except ValueError:
        raise ConfigError(f"{_setting(field)}: not a PEM certificate") from None
    now = datetime.datetime.now(datetime.UTC)
    for cert in certs:
        if cert.not_valid_after_utc < now:
            raise ConfigError(
                f"{_setting(field)}: the certificate {cert.subject.rfc4514_string()} expired "
                f"on {cert.not_valid_after_utc:%Y-%m-%d}"
            )
    return data, certs


def _spki(key: object) -> bytes:
    public = key.public_key()  # type: ignore[attr-defined]
    return bytes(
        public.public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )


def _client_pair(t: TemporalSettings) -> tuple[bytes, bytes] | None:
    key_value = "" if t.tls_key is None else t.tls_key.get_secret_value()
    if not t.tls_cert and not key_value:
        return None
    if not t.tls_cert or not key_value:
        missing, given = ("tls_key", "tls_cert") if t.tls_cert else ("tls_cert", "tls_key")
        raise ConfigError(f"{_setting(missing)} is not set but {_setting(given)} is: give both")
    cert_pem, certs = _certificates("tls_cert", t.tls_cert)
    key_pem = _pem("tls_key", key_value)
    try:
        key = serialization.load_pem_private_key(key_pem, password=None)
    except (ValueError, TypeError) as exc:
        # TypeError: an encrypted key; the connection cannot prompt for its password.
        why = "encrypted (give it unencrypted)" if isinstance(exc, TypeError) else "unreadable"
        raise ConfigError(f"{_setting('tls_key')}: not a PEM private key, or {why}") from None
    if _spki(key) != _spki(certs[0]):
        raise ConfigError(
            f"{_setting('tls_key')}: the key is not the one of the certificate in "
            f"{_setting('tls_cert')}"
        )
    return cert_pem, key_pem


@dataclass(frozen=True)
class TemporalAccess:
    """What `Client.connect` is given besides the address: `tls` and `api_key`."""

    tls: TLSConfig | bool
    api_key: str | None

    @property
    def uses_tls(self) -> bool:
        return self.tls is not False

    @property
    def has_client_cert(self) -> bool:
        return isinstance(self.tls, TLSConfig) and self.tls.client_cert is not None


def temporal_access(t: TemporalSettings) -> TemporalAccess:
    """The TLS and API key settings, read and checked (ConfigError naming the setting)."""
    api_key = None if t.api_key is None else t.api_key.get_secret_value().strip()
    if t.api_key is not None and not api_key:
        raise ConfigError(f"{_setting('api_key')} is empty")
    pair = _client_pair(t)
    ca = _certificates("tls_ca", t.tls_ca)[0] if t.tls_ca else None
    name = t.tls_server_name.strip() or None
    if pair is None and ca is None and name is None:
        # An API key means Temporal Cloud, which is TLS with public roots only.
        return TemporalAccess(tls=t.tls or api_key is not None, api_key=api_key)
    return TemporalAccess(
        tls=TLSConfig(
            server_root_ca_cert=ca,
            domain=name,
            client_cert=None if pair is None else pair[0],
            client_private_key=None if pair is None else pair[1],
        ),
        api_key=api_key,
    )


# Words of the TLS library's (rustls) and the transport's failures.
_WRONG_NAME = ("notvalidforname", "not valid for name")
_UNTRUSTED = ("unknownissuer", "invalid peer certificate", "invalidcertificate")
# How a server that wants a client certificate ends the handshake: an alert, or (Python's
# ssl, some proxies) a bare close, which the client may meet as a broken pipe when it was
# still writing (seen under load).
_ENDED = (
    "certificaterequired",
    "certificate required",
    "handshakefailure",
    "bad certificate",
    "badcertificate",
    "unknownca",
    "unknown ca",
    "close_notify",
    "unexpected eof",
    "unexpected-eof",
    "connection reset",
    "broken pipe",
)
# What a plaintext client meets at a TLS frontend.
_BROKE = ("broken pipe", "connection reset", "invalidcontenttype", "frame with invalid size")
_CERT = f"{_setting('tls_cert')} and {_setting('tls_key')}"


def handshake_hint(error_text: str, access: TemporalAccess) -> str | None:
    """Which setting a failed connection points at, when TLS (or its absence) is why."""
    low = error_text.lower()

    def said(words: tuple[str, ...]) -> bool:
        return any(w in low for w in words)

    if not access.uses_tls:
        if said(_BROKE):
            return plaintext_hint()
        return None
    if said(_WRONG_NAME):
        return f"its certificate is not for that name: set {_setting('tls_server_name')}"
    if said(_UNTRUSTED):
        return f"its certificate is not trusted: set {_setting('tls_ca')} to its CA"
    if said(_ENDED):
        return certificate_hint(access)
    return None


def plaintext_hint() -> str:
    """What to do about a client without TLS at a frontend that speaks it."""
    return f"if that frontend speaks TLS, set {_setting('tls')} (or its CA, {_CERT})"


def certificate_hint(access: TemporalAccess) -> str:
    """What to do about a server that wants a client certificate (mTLS)."""
    if access.has_client_cert:
        return f"it refused the client certificate: is {_CERT} signed by a CA it trusts?"
    return f"it refused the client certificate: it wants one (mTLS); set {_CERT}"


# The HTTP/2 connection preface and an empty SETTINGS frame: a frontend that let the client
# in answers it at once, so the probe below need not wait out its timeout.
_H2_HELLO = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"


_PROBE_SECONDS = 3.0


async def speaks_tls(address: str) -> bool:
    """Whether the frontend at `address` answers a TLS handshake (asked only when a client
    without TLS failed with no cause named: the transport may read a TLS frontend's alert
    or close as a cancelled operation). Nothing is verified: this only asks which protocol
    the other side speaks, and nothing is sent after the handshake."""
    host, _, port = address.rpartition(":")
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    try:
        async with asyncio.timeout(_PROBE_SECONDS):
            _, writer = await asyncio.open_connection(host, int(port), ssl=ctx)
            writer.close()
    except ssl.SSLError as exc:
        return "alert" in str(exc).lower()  # a TLS server's refusal is still TLS
    except (OSError, TimeoutError, ValueError):
        return False
    return True


async def wants_client_certificate(address: str, access: TemporalAccess) -> bool:
    """Whether the frontend at `address` refuses a client that shows no certificate.

    Asked only after a connection failed with TLS on and the transport's error named no
    cause: under TLS 1.3 a client finishes its side of the handshake before the server has
    checked the client's certificate, so the server's refusal may reach the Rust transport
    as a bare "transport error" or a cancelled operation (seen under load). One handshake of
    our own, with no certificate, then settles it: the server's alert is read here."""
    host, _, port = address.rpartition(":")
    tls = access.tls if isinstance(access.tls, TLSConfig) else None
    ca = None if tls is None or tls.server_root_ca_cert is None else tls.server_root_ca_cert
    ctx = ssl.create_default_context(cadata=None if ca is None else ca.decode())
    ctx.set_alpn_protocols(["h2"])
    name = (tls.domain if tls is not None else None) or host
    try:
        async with asyncio.timeout(_PROBE_SECONDS):
            reader, writer = await asyncio.open_connection(
                host, int(port), ssl=ctx, server_hostname=name
            )
            try:
                writer.write(_H2_HELLO)
                await writer.drain()
                await reader.read(1)
            finally:
                writer.close()
    except ssl.SSLError as exc:
        return any(w in str(exc).lower().replace("_", " ") for w in _ENDED)
    except (OSError, TimeoutError, ValueError):
        return False
    return False


def reason_text(reason: str) -> str:
    """rustls's reasons end with a link to its manual, noise in a one-line error."""
    return reason.split(": https://", 1)[0]
