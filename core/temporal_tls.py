"""TLS, mTLS and API keys for the Temporal connection (issue 28): the `AGENTRT_TEMPORAL_TLS*`
and `AGENTRT_TEMPORAL_API_KEY` settings, read and checked before a connection is tried, so
a wrong file, a certificate that is not one, a key that is not the certificate's or an
expired certificate stops the process at start with one line naming the setting. Why a
connection the server refused failed is core/temporal_diagnose.py's."""

import datetime
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
