"""What `--check` (the worker's and the API's) says of the controls a misconfiguration
silently turns off (issue 40): whether Temporal payloads are encrypted and with which key,
how Temporal Web decodes them, and how the connection to Temporal is secured. One line
each; secrets are never printed, only whether they are set and the key ids, which payloads
carry in clear anyway."""

from cryptography import x509
from temporalio.api.workflowservice.v1 import DescribeNamespaceRequest
from temporalio.service import RPCError, RPCStatusCode

from agentrt.contracts.errors import ConfigError
from agentrt.core.codec import parse_keys
from agentrt.core.settings import Settings
from agentrt.core.settings_process import TemporalSettings
from agentrt.core.temporal import connect
from agentrt.core.temporal_tls import TemporalAccess


def payload_line(settings: Settings) -> str:
    """Payload encryption: on with which keys and from where, or off and what that means.
    Bad keys are the caller's ConfigError (core/temporal.settings_converter)."""
    spec = settings.payload_keys_spec()
    if not spec:
        below_full = (
            "allowed anyway: AGENTRT_ALLOW_PLAINTEXT_HISTORY"
            if settings.privacy.allow_plaintext_history
            else "set AGENTRT_PAYLOAD_KEYS"
        )
        return (
            "payload keys: NONE: Temporal holds prompts, answers and tool arguments in the "
            f"clear; profiles below privacy full cannot start ({below_full})"
        )
    keys, active = parse_keys(spec)
    where = (
        "AGENTRT_PAYLOAD_KEYS"
        if settings.privacy.payload_keys is not None
        else str(settings.payload_key_file().resolve())
    )
    older = sorted(set(keys) - {active})
    also = f", also decrypts {', '.join(older)}" if older else ""
    return f"payload keys: active key {active!r}{also} ({where}); payloads bound to their run"


def codec_line(settings: Settings) -> str:
    """How Temporal Web reads encrypted payloads, and which codec server would start."""
    if not settings.payload_keys_spec():
        return "codec: none needed (payloads are not encrypted)"
    c = settings.codec
    token = "set" if c.token is not None else "NOT set (it refuses to start without it)"
    encode = "set" if c.encode_token is not None else "not set: it encodes for nobody"
    return (
        "codec: agentrt-api serves /codec to signed-in operators (payloads:decode, only runs "
        f"they may read); `agentrt codec-server` token {token}, encode token {encode}; "
        f"Web UI origins {', '.join(c.origins()) or 'none'}"
    )


def _subject(cert_pem: bytes) -> str:
    cert = x509.load_pem_x509_certificates(cert_pem)[0]
    return f"{cert.subject.rfc4514_string()}, expires {cert.not_valid_after_utc:%Y-%m-%d}"


def tls_line(t: TemporalSettings, access: TemporalAccess) -> str:
    """The connection to Temporal as the worker makes it (the settings already checked)."""
    api_key = "API key set" if access.api_key is not None else "no API key"
    if not access.uses_tls:
        return f"temporal TLS: off (plaintext to {t.address}), {api_key}"
    tls = access.tls if not isinstance(access.tls, bool) else None
    if tls is None:
        return f"temporal TLS: on, system CA roots, {api_key}"
    ca = "system CA roots" if tls.server_root_ca_cert is None else (
        f"CA {_subject(tls.server_root_ca_cert)}"
    )  # fmt: skip
    name = f", server name {tls.domain}" if tls.domain else ""
    client = "no client certificate" if tls.client_cert is None else (
        f"client certificate {_subject(tls.client_cert)}"
    )  # fmt: skip
    return f"temporal TLS: on, {ca}{name}, {client}, {api_key}"


async def temporal_line(settings: Settings) -> str:
    """Connect as the process would and ask Temporal for the namespace: the line, or the
    typed error (TemporalUnavailableError from `connect`, a ConfigError for a namespace
    that does not exist)."""
    client = await connect(settings)
    try:
        await client.workflow_service.describe_namespace(
            DescribeNamespaceRequest(namespace=settings.temporal.namespace)
        )
    except RPCError as exc:
        if exc.status is not RPCStatusCode.NOT_FOUND:
            raise
        raise ConfigError(
            f"Temporal at {settings.temporal.address} has no namespace "
            f"{settings.temporal.namespace!r}: set AGENTRT_TEMPORAL_NAMESPACE"
        ) from None
    return (
        f"temporal: {settings.temporal.address} namespace {settings.temporal.namespace}, "
        f"task queue {settings.temporal.task_queue}"
    )
