"""Why a connection to Temporal failed, in words naming what to change (issue 40): a
frontend that speaks plaintext where TLS was asked for (an API key is then never sent), a
TLS terminator without HTTP/2 over ALPN, a client certificate from a CA the server does not
trust or one it refused, no certificate where one is required, a server certificate that
is not trusted or not for the name, or a plaintext client at a TLS frontend.

The Rust transport's error names some of these, but not reliably: under TLS 1.3 a client
finishes its side of the handshake before the server checks its certificate, so a refusal
may reach it as a bare "transport error" (seen under load). So after any failed connect,
one handshake of our own with the same settings (CA, server name, client certificate,
ALPN h2) asks the frontend, and its alert or its answer says which it was. Nothing is
verified less than the real client does, and nothing is sent after the handshake but the
HTTP/2 preface."""

import asyncio
import contextlib
import os
import ssl
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from temporalio.service import TLSConfig

from agentrt.core.settings_base import env_name
from agentrt.core.settings_process import TemporalSettings
from agentrt.core.temporal_tls import TemporalAccess

PROBE_SECONDS = 3.0
# The HTTP/2 connection preface and an empty SETTINGS frame: a frontend that let the client
# in answers it at once; one that refuses the certificate after the handshake (TLS 1.3)
# sends its alert instead.
_H2_HELLO = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
# What OpenSSL says when the other side answered a ClientHello with something not TLS.
_NOT_TLS = ("wrong version number", "record layer failure", "packet length too long",
            "http request", "unknown protocol", "invalidcontenttype", "invalid content type",
            "frame with invalid size")  # fmt: skip
# Alerts a server sends when it trusts the client certificate's CA but refuses the
# certificate itself (key usage without clientAuth, revoked, not on its list).
_NOT_ACCEPTED = ("bad certificate", "unsupported certificate", "certificate unknown",
                 "certificate revoked", "certificate expired", "access denied")  # fmt: skip
_WANTS_ONE = ("certificate required",)


def _setting(field: str) -> str:
    return env_name(TemporalSettings, field)


_CERT = f"{_setting('tls_cert')} and {_setting('tls_key')}"


@dataclass(frozen=True)
class Probe:
    """What one handshake of our own found at the frontend."""

    reached: bool = False  # a TCP connection was made
    tls: bool | None = None  # it answered TLS (None: could not tell)
    alert: str | None = None  # the server's alert, as words ("unknown ca")
    server_untrusted: bool = False  # its certificate is not signed by a trusted CA
    wrong_name: bool = False  # its certificate is not for the name dialled
    alpn: str | None = None  # the protocol it chose over ALPN, after a handshake
    accepted: bool = False  # the handshake and the HTTP/2 preface went through


def _alert_words(exc: ssl.SSLError) -> str | None:
    reason = (exc.reason or "").upper()
    if "ALERT_" in reason:
        return reason.split("ALERT_", 1)[1].lower().replace("_", " ")
    return None


@contextlib.contextmanager
def _client_files(tls: TLSConfig | None) -> Iterator[tuple[str, str] | None]:
    """The client certificate and key as files, which `ssl` needs: in a private temporary
    directory, removed when the probe is done."""
    if tls is None or tls.client_cert is None or tls.client_private_key is None:
        yield None
        return
    with tempfile.TemporaryDirectory(prefix="agentrt-probe-") as folder:
        cert, key = Path(folder) / "cert.pem", Path(folder) / "key.pem"
        cert.write_bytes(tls.client_cert)
        fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(tls.client_private_key)
        yield str(cert), str(key)


def _context(tls: TLSConfig | None, files: tuple[str, str] | None) -> ssl.SSLContext:
    ca = None if tls is None or tls.server_root_ca_cert is None else tls.server_root_ca_cert
    ctx = ssl.create_default_context(cadata=None if ca is None else ca.decode())
    ctx.set_alpn_protocols(["h2"])
    if files is not None:
        ctx.load_cert_chain(*files)
    return ctx


async def probe(address: str, access: TemporalAccess) -> Probe:
    """One handshake with the client's own TLS settings, and the HTTP/2 preface after it."""
    host, _, port = address.rpartition(":")
    tls = access.tls if isinstance(access.tls, TLSConfig) else None
    name = (tls.domain if tls is not None else None) or host
    with _client_files(tls) as files:
        ctx = _context(tls, files)
        try:
            async with asyncio.timeout(PROBE_SECONDS):
                return await _handshake(host, int(port), ctx, name)
        except (TimeoutError, ValueError):
            return Probe()


async def _handshake(host: str, port: int, ctx: ssl.SSLContext, name: str) -> Probe:
    try:
        reader, writer = await asyncio.open_connection(host, port)
    except OSError:
        return Probe()
    try:
        return await _ask(reader, writer, ctx, name)
    finally:
        with contextlib.suppress(Exception):
            writer.transport.abort()


async def _ask(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, ctx: ssl.SSLContext, name: str
) -> Probe:
    try:
        await writer.start_tls(ctx, server_hostname=name)
    except ssl.SSLCertVerificationError as exc:
        text = str(exc).lower()
        wrong = "hostname" in text or "ip address mismatch" in text
        return Probe(reached=True, tls=True, wrong_name=wrong, server_untrusted=not wrong)
    except ssl.SSLError as exc:
        return _refusal(exc)
    except OSError:
        return Probe(reached=True)
    ssl_object = writer.get_extra_info("ssl_object")
    alpn = ssl_object.selected_alpn_protocol() if isinstance(ssl_object, ssl.SSLObject) else None
    try:
        writer.write(_H2_HELLO)
        await writer.drain()
        answer = await reader.read(1)
    except ssl.SSLError as exc:
        return _refusal(exc, alpn)
    except OSError:
        return Probe(reached=True, tls=True, alpn=alpn)
    return Probe(reached=True, tls=True, alpn=alpn, accepted=bool(answer))


def _refusal(exc: ssl.SSLError, alpn: str | None = None) -> Probe:
    alert = _alert_words(exc)
    if alert is not None:
        return Probe(reached=True, tls=True, alert=alert, alpn=alpn)
    text = f"{exc.reason or ''} {exc}".lower().replace("_", " ")
    if any(w in text for w in _NOT_TLS):
        return Probe(reached=True, tls=False)
    return Probe(reached=True, alpn=alpn)


def explain(found: Probe, access: TemporalAccess, error_text: str = "") -> str | None:
    """The cause of a failed connect of a client with TLS on, and what to change; None
    when TLS is not why (the frontend is not there, or let a handshake like ours in)."""
    words = error_text.lower()
    if found.tls is False or (not found.reached and "invalidcontenttype" in words):
        return not_tls_hint(access)
    if found.wrong_name:
        return f"its certificate is not for that name: set {_setting('tls_server_name')}"
    if found.server_untrusted:
        return f"its certificate is not trusted: set {_setting('tls_ca')} to its CA"
    if found.alert is not None:
        return alert_hint(found.alert, access)
    if found.reached and found.tls and found.alpn != "h2":
        return alpn_hint(found.alpn)
    if not found.reached and "h2notnegotiated" in words:
        return alpn_hint(None)
    return None


def alert_hint(alert: str, access: TemporalAccess) -> str:
    """What to do about the alert a TLS frontend ended the handshake with."""
    if alert == "unknown ca":
        return (
            f"it does not trust the CA that issued the client certificate in "
            f"{_setting('tls_cert')} (alert: unknown ca): use a certificate its client CA signed"
        )
    if alert in _WANTS_ONE or (alert == "handshake failure" and not access.has_client_cert):
        return f"it wants a client certificate (mTLS): set {_CERT}"
    if alert in _NOT_ACCEPTED or alert == "handshake failure":
        return (
            f"it did not accept the client certificate in {_setting('tls_cert')} (alert: "
            f"{alert}): its CA is trusted, the certificate is not (a client certificate "
            "needs the clientAuth key usage; revoked or not allowed there?)"
        )
    return f"the TLS frontend refused the handshake (alert: {alert})"


def alpn_hint(chosen: str | None) -> str:
    offered = "offers no protocol over ALPN" if not chosen else f"chose {chosen!r} over ALPN"
    return (
        f"its TLS frontend {offered}; gRPC needs HTTP/2 (ALPN h2): enable h2 on the load "
        "balancer or TLS terminator in front of Temporal"
    )


def not_tls_hint(access: TemporalAccess) -> str:
    """A client with TLS on at a frontend that answers in plaintext."""
    if access.api_key is not None:
        return (
            "it does not speak TLS, and an API key is only ever sent over TLS "
            f"({_setting('api_key')} turns TLS on): point {_setting('address')} at the TLS "
            f"endpoint, or unset {_setting('api_key')} for a server that needs none"
        )
    return (
        f"it speaks plaintext, not TLS: point {_setting('address')} at its TLS port, or "
        f"unset {_setting('tls')} and the other TLS settings"
    )


def plaintext_hint() -> str:
    """What to do about a client without TLS at a frontend that speaks it."""
    return f"it speaks TLS: set {_setting('tls')} (or its CA, {_CERT})"


async def speaks_tls(address: str) -> bool:
    """Whether the frontend at `address` answers a TLS handshake (asked when a client
    without TLS failed). Nothing is verified: this only asks which protocol the other side
    speaks, and nothing is sent after the handshake."""
    host, _, port = address.rpartition(":")
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    try:
        async with asyncio.timeout(PROBE_SECONDS):
            _, writer = await asyncio.open_connection(host, int(port), ssl=ctx)
            writer.close()
    except ssl.SSLError as exc:
        return "alert" in str(exc).lower()  # a TLS server's refusal is still TLS
    except (OSError, TimeoutError, ValueError):
        return False
    return True


async def diagnose(address: str, access: TemporalAccess, error_text: str) -> str | None:
    """The hint for a failed connect: the frontend asked with our own handshake."""
    if not access.uses_tls:
        return plaintext_hint() if await speaks_tls(address) else None
    return explain(await probe(address, access), access, error_text)


def reason_text(reason: str) -> str:
    """rustls's reasons end with a link to its manual, noise in a one-line error."""
    return reason.split(": https://", 1)[0]
