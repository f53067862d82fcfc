"""What `agentrt-worker --check` says of the controls a misconfiguration silently turns off
(issue 40): whether Temporal payloads are encrypted and with which key, how Temporal Web
decodes them, how the connection to Temporal is secured, and who may start each profile
this worker serves. One line each (a line per profile for the grants); secrets are never
printed, only whether they are set and the key ids, which payloads carry in clear anyway."""

from collections.abc import Callable, Iterable

from cryptography import x509
from sqlalchemy.engine import Engine

from agentrt.api.grants import Grants
from agentrt.contracts.profiles import Profile
from agentrt.core.codec import parse_keys
from agentrt.core.settings import Settings
from agentrt.core.settings_api import ApiServerSettings
from agentrt.core.settings_doc import variable
from agentrt.core.settings_process import TemporalSettings
from agentrt.core.temporal_tls import TemporalAccess
from agentrt.store.db.context import utcnow
from agentrt.store.db.open import open_store
from agentrt.store.db.sealing import Sealer
from agentrt.store.security.principals import PrincipalStore, TokenInfo

Emit = Callable[[str], None]


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


def _tokens(settings: Settings) -> list[TokenInfo] | None:
    """The operator tokens, or None where there is no schema or seal key yet to read with."""
    if settings.privacy.seal_keys is None and not settings.seal_key_file().exists():
        return None
    engine: Engine | None = None
    try:
        engine, ctx = open_store(
            settings.database.resolved_url(),
            Sealer.from_b64(settings.read_seal_keys()),
            run_migrations=False,
        )
        now = utcnow()
        return [t for t in PrincipalStore(ctx).list() if t.active(now)]
    finally:
        if engine is not None:
            engine.dispose()


def grant_lines(settings: Settings, profiles: Iterable[Profile], migrated: bool) -> list[str]:
    """Who may start each profile: operator tokens with runs:start (or admin), and A2A
    callers by their AGENTRT_API_KEY_PROFILES grants (the API's settings, read here too)."""
    tokens = _tokens(settings) if migrated else None
    api = ApiServerSettings()
    try:
        callers = api.grants()
    except ValueError as exc:
        return [f"grants: {exc}"]
    lines = []
    if tokens is None:
        lines.append("grants: operator tokens not read (no database schema or seal key yet)")
    for profile in sorted(profiles, key=lambda p: p.name):
        who = [
            f"{t.principal} (token {t.id})"
            for t in tokens or []
            if ("runs:start" in t.scopes or "admin" in t.scopes)
            and Grants.of(t.profiles, everything="admin" in t.scopes).allows(profile)
        ]
        who += [f"{c} (A2A)" for c, g in sorted(callers.items()) if Grants.of(g).allows(profile)]
        named = " (only an exact grant: it writes without approval)" if (
            profile.writes_unapproved
        ) else ""  # fmt: skip
        lines.append(
            f"grants: profile {profile.name}{named} may be started by "
            f"{', '.join(who) if who else 'nobody yet'}"
        )
    keys = variable(ApiServerSettings, "keys")
    ungranted = sorted(set(api.callers().values()) - set(callers))
    if ungranted:
        lines.append(f"grants: A2A callers in {keys} with no profile: {', '.join(ungranted)}")
    return lines
