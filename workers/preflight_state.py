"""What `agentrt-worker --check` says of the controls a misconfiguration silently turns off
(issue 40): whether Temporal payloads are encrypted and with which key, how Temporal Web
decodes them, how the connection to Temporal is secured, and who may start each profile
this worker serves. One line each (a line per profile for the grants); secrets are never
printed, only whether they are set and the key ids, which payloads carry in clear anyway.
The payload-key, codec and TLS lines are core/settings_state.py's, which `agentrt-api
--check` prints too."""

from collections.abc import Callable, Iterable

from sqlalchemy.engine import Engine

from agentrt.api.grants import Grants
from agentrt.contracts.profiles import Profile
from agentrt.core.settings import Settings
from agentrt.core.settings_api import ApiServerSettings
from agentrt.core.settings_doc import variable
from agentrt.store.db.context import utcnow
from agentrt.store.db.open import open_store
from agentrt.store.db.sealing import Sealer
from agentrt.store.security.principals import PrincipalStore, TokenInfo

Emit = Callable[[str], None]


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
