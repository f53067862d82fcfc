"""`agentrt-worker --check`: validate what the worker needs before it starts, changing
nothing (no migration, no key file, no data directory). Each finding is one line.

It runs every check the worker runs at start, with the worker's own functions, so the two
cannot disagree (tests/workers/test_check_agrees.py tries each misconfiguration against
both): the settings, the profiles against the tools of the toolboxes and MCP servers, the
providers the profiles name and the prices their cost budgets need, the database, Temporal.
It also says what state the controls a mistake silently turns off are in: payload keys,
the codec, Temporal TLS, and who may start each profile (workers/preflight_state.py)."""

from collections.abc import Callable, Mapping

from sqlalchemy.engine import make_url

from agentrt.activities.toolbox.mcp_config import load_mcp_config
from agentrt.contracts.errors import ConfigError
from agentrt.contracts.profiles import Profile
from agentrt.core.policies import PolicySet, served_policies
from agentrt.core.profiles import check_ceiling, load_profiles
from agentrt.core.settings import Settings
from agentrt.core.settings_state import codec_line, payload_line, temporal_line, tls_line
from agentrt.core.temporal import settings_converter
from agentrt.core.temporal_tls import temporal_access
from agentrt.store.db.engine import make_engine
from agentrt.store.db.open import check_worker_store
from agentrt.store.db.sealing import Sealer
from agentrt.workers.fleet import served_tool_queues
from agentrt.workers.held import worker_seal_keys
from agentrt.workers.preflight_state import grant_lines
from agentrt.workers.providers import check_budgets, check_models, load_providers
from agentrt.workers.tool_list import mcp_tools, tool_lines
from agentrt.workers.toolboxes import load_toolboxes


async def check(settings: Settings, emit: Callable[[str], None]) -> None:
    """Emit one line per finding, in the order the worker meets them; the first problem is
    a typed error (ConfigError, StoreUnavailableError, TemporalUnavailableError)."""
    if settings.privacy.seal_keys is not None or settings.seal_key_file().exists():
        try:
            sealer = Sealer.from_b64(settings.read_seal_keys())
        except ValueError as exc:
            raise ConfigError(f"AGENTRT_SEAL_KEYS: {exc}") from None
        emit(f"seal keys: active key {sealer.active!r}")
    else:
        worker_seal_keys(settings)  # the worker's own ConfigError, naming `agentrt migrate`
    settings_converter(settings)  # bad payload keys: the ConfigError naming the setting
    emit(payload_line(settings))
    emit(codec_line(settings))
    try:
        settings.providers.answer_levels()
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    profiles = load_profiles(settings.worker.profiles_file)
    emit(f"profiles: {', '.join(sorted(profiles))} ({settings.worker.profiles_file})")
    policies = served_policies(settings.worker.policies_file, profiles)  # parsed, as at start
    await _tools_and_models(settings, profiles, policies, emit)
    if policies:
        emit(f"approval policies: {', '.join(sorted(policies))}")
    url = settings.database.resolved_url()
    shown = make_url(url).render_as_string(hide_password=True)
    engine = make_engine(url)
    try:
        check_worker_store(engine)  # the worker's start check: absent or behind is refused
    finally:
        engine.dispose()
    emit(f"database {shown}: schema at head")
    for line in grant_lines(settings, profiles.values(), True):
        emit(line)
    emit(tls_line(settings.temporal, temporal_access(settings.temporal)))
    emit(await temporal_line(settings))


async def _tools_and_models(
    settings: Settings,
    profiles: dict[str, Profile],
    policies: Mapping[str, PolicySet],
    emit: Callable[[str], None],
) -> None:
    """The tools as the worker loads them (a profile naming an unknown tool or toolbox is
    the worker's ConfigError), then the providers as it builds them (a profile's unknown
    provider, a cost budget with no price: the same)."""
    file = settings.worker.mcp_servers_file
    mcp = load_mcp_config(file) if file else None
    servers, sources, down = await mcp_tools(mcp, settings)
    for server in mcp.servers if mcp is not None else []:
        where = server.where
        count = len(dict(servers).get(server.name, []))
        state = f"{count} tools" if server.name not in down else (
            f"DOWN ({down[server.name]}): the worker starts without its tools and lists it "
            "again until it answers"
        )  # fmt: skip
        emit(f"MCP server {server.name}: {server.transport} {where}, {state}")
    boxes = load_toolboxes(settings)
    lines = tool_lines(boxes, servers, sources, profiles, settings, list(down), policies)
    for line in lines:
        emit(
            f"tool {line.name}: {line.effect} ({line.source}), toolbox {line.toolbox}, "
            f"approval {line.approval}, probe {line.probe}"
        )
    models = load_providers(settings)
    check_models(profiles.values(), models.providers)
    check_budgets(profiles.values(), models.prices)
    check_ceiling(profiles.values(), settings.limits.max_iterations_ceiling)
    loaded = {b.name for b in boxes} | {name for name, _ in servers} | set(down)
    served_tool_queues(settings, loaded.__contains__, sorted(models.providers))
    for name in sorted(models.providers):
        level = models.answer_levels.get(name, "full")
        priced = "priced" if name in models.prices else "no prices"
        emit(f"provider {name}: answer level {level}, {priced}")
