"""`agentrt-api --check`: what the API would start with, checked the way it starts, without
starting it (no server, no migration, nothing written). One line per finding; the first
problem is the typed error the API itself would stop with (exit 2, one line naming the
setting), so the check and the start cannot disagree on it.

It says what state the controls a mistake silently turns off are in, as the worker's
`--check` does (workers/preflight.py): who may call the API (A2A keys and their grants,
operator tokens), payload encryption and the codec (core/settings_state.py), TLS to
Temporal, and whether the database is reachable with its schema. Secrets are never
printed: only whether they are set, key ids and principals' names."""

from collections.abc import Callable

from sqlalchemy.engine import make_url

from agentrt.api.settings import ApiSettings
from agentrt.contracts.errors import ConfigError, StoreUnavailableError
from agentrt.core.settings_state import codec_line, payload_line, temporal_line, tls_line
from agentrt.core.temporal import settings_converter
from agentrt.core.temporal_tls import temporal_access
from agentrt.store.db.context import utcnow
from agentrt.store.db.open import WHICH_SETTING, open_store, probe_database
from agentrt.store.db.sealing import Sealer
from agentrt.store.security.principals import PrincipalStore

Emit = Callable[[str], None]
_DATABASE = {
    "migrated": "schema present",
    "empty": "reachable, no schema yet (the API migrates it at start)",
    "absent": "no file yet (the API creates it and its schema at start)",
}


async def check(settings: ApiSettings, emit: Emit) -> None:
    """Emit one line per finding, in the order the API meets them at start; the first
    problem is a typed error (ConfigError, StoreUnavailableError, TemporalUnavailableError)."""
    try:  # the API only reads the seal keys: a missing key is its ConfigError, here too
        sealer = Sealer.from_b64(settings.read_seal_keys())
    except ValueError as exc:
        raise ConfigError(f"AGENTRT_SEAL_KEYS: {exc}") from None
    emit(f"seal keys: active key {sealer.active!r}")
    a = settings.api
    extra = f"; also answers to {a.allowed_hosts}" if a.allowed_hosts.strip() else ""
    emit(
        f"api: listens on {a.host}:{a.port}, public URL {a.url()}{extra}; bodies up to "
        f"{a.max_body_bytes:,} bytes"
    )
    emit(_a2a_line(settings))
    settings_converter(settings)  # bad payload keys: the ConfigError naming the setting
    emit(payload_line(settings))
    emit(codec_line(settings))
    url = settings.database.resolved_url()
    shown = make_url(url).render_as_string(hide_password=True)
    state = probe_database(url)
    if state != "migrated" and not a.migrate:
        raise StoreUnavailableError(
            f"the database at {shown} has no agentrt schema and AGENTRT_API_MIGRATE is off: "
            f"{WHICH_SETTING} to the worker's database, or create the schema with "
            "`agentrt migrate`"
        )
    emit(f"database {shown}: {_DATABASE[state]}")
    emit(_operator_line(settings, sealer) if state == "migrated" else _NO_TOKENS)
    emit(tls_line(settings.temporal, temporal_access(settings.temporal)))
    emit(await temporal_line(settings))


_NO_TOKENS = "auth: operator API: no token yet (create one with `agentrt-api token create`)"


def _a2a_line(settings: ApiSettings) -> str:
    """The A2A callers (AGENTRT_API_KEYS) and what each may start; a bad entry is the
    ConfigError the API stops with."""
    try:
        callers = sorted(set(settings.api.callers().values()))
        grants = settings.api.grants()
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    if not callers:
        return "auth: A2A: no API keys (AGENTRT_API_KEYS): every A2A request is refused (401)"
    shown = [
        f"{c} may start {'|'.join(sorted(grants[c]))}" if c in grants else f"{c} starts nothing"
        for c in callers
    ]
    return f"auth: A2A callers by API key: {', '.join(shown)}"


def _operator_line(settings: ApiSettings, sealer: Sealer) -> str:
    """The operator tokens that are active now: how many, and who holds admin."""
    engine, ctx = open_store(settings.database.resolved_url(), sealer, run_migrations=False)
    try:
        now = utcnow()
        active = [t for t in PrincipalStore(ctx).list() if t.active(now)]
    finally:
        engine.dispose()
    if not active:
        return _NO_TOKENS
    admins = sorted({t.principal for t in active if "admin" in t.scopes})
    who = f"; admin: {', '.join(admins)}" if admins else "; no admin token"
    principals = len({t.principal for t in active})
    return f"auth: operator API: {len(active)} active tokens of {principals} principals{who}"
