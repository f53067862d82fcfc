"""Composition root: settings → engine, store, providers, toolboxes → activity objects.

`compose` makes every object and opens nothing (the engine connects on first use, the
pools start threads on first use); `WorkerResources.open` (workers/resources.py) is the
worker's start: the database reached and its schema checked (never migrated), the profiles
registered. `build` is both, for the embedded demo and tests that drive a store without a
worker."""

from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from functools import partial
from typing import TypedDict, Unpack

from agentrt.activities._common import ActivityGroup
from agentrt.activities.a2a import A2AActivities, completion_hook
from agentrt.activities.children import ChildActivities
from agentrt.activities.fence import FenceActivities, ReconcileActivities, WriteActivities
from agentrt.activities.fence.answer import AnswerActivities
from agentrt.activities.model import ModelActivities
from agentrt.activities.pauses import PauseActivities
from agentrt.activities.policy import PolicyActivities, check_policies
from agentrt.activities.ports import ModelProvider, Tool, no_faults
from agentrt.activities.registry import LOOSE, ProfileCatalog, Routes, ToolRegistry
from agentrt.activities.run import RunActivities
from agentrt.activities.settle import Settle, SettleActivities
from agentrt.activities.settle.completion import Completion
from agentrt.activities.toolbox.box import Toolbox, ToolboxContext
from agentrt.activities.toolbox.mcp_config import load_mcp_config
from agentrt.activities.tools import ToolActivities
from agentrt.contracts.profiles import Profile
from agentrt.core.codec import parse_keys
from agentrt.core.policies import PolicySet, served_policies
from agentrt.core.profiles import check_ceiling, checked_profiles, load_profiles
from agentrt.core.settings import Settings
from agentrt.store.db.open import store_context
from agentrt.store.db.sealing import Sealer
from agentrt.store.live.table import LiveStore
from agentrt.store.ops.gauges import watch_store
from agentrt.store.steps.tools import ToolStepStore
from agentrt.workers.call_metrics import fallback_counter, metered_providers
from agentrt.workers.fastpath import store_pool
from agentrt.workers.faults import fault_hook
from agentrt.workers.held import held_by, merged_servers, on_pool, worker_seal_keys
from agentrt.workers.metrics import (
    MeteredRunStore,
    WorkerMetrics,
    count_turn,
    run_ended,
)
from agentrt.workers.providers import (
    LoadedProviders,
    check_budgets,
    check_models,
    load_providers,
)
from agentrt.workers.resources import WorkerResources as WorkerResources
from agentrt.workers.resources import pooled_connections, wrapped
from agentrt.workers.toolboxes import load_toolboxes
from agentrt.workers.tracing import traced_providers

TOOL_THREAD_PREFIX = "agentrt-tool"
STORE_THREAD_PREFIX = "agentrt-store"


class ComposeOptions(TypedDict, total=False):
    """`compose`'s keyword arguments, which `build` passes on."""

    toolboxes: Iterable[Toolbox]
    providers: Mapping[str, ModelProvider] | None
    faults: Callable[[str], None] | None
    metrics: WorkerMetrics | None
    profiles: Iterable[Profile] | None
    pending: Iterable[str]


def build(settings: Settings, **options: Unpack[ComposeOptions]) -> WorkerResources:
    """`compose`, then `open`: the resources of a worker that is starting now."""
    resources = compose(settings, **options)
    try:
        resources.open()
    except BaseException:
        resources.close()
        raise
    return resources


def compose(
    settings: Settings,
    *,
    toolboxes: Iterable[Toolbox] = (),
    providers: Mapping[str, ModelProvider] | None = None,
    faults: Callable[[str], None] | None = None,
    metrics: WorkerMetrics | None = None,
    profiles: Iterable[Profile] | None = None,
    pending: Iterable[str] = (),
) -> WorkerResources:
    """Every activity, over a store that is not reached yet. Toolboxes come from the entry
    points, AGENTRT_TOOLBOXES, `toolboxes` and the profiles' own; a bad one is a
    ConfigError here. The worker serves `profiles` when given (written in Python), else
    those of AGENTRT_PROFILES_FILE. The activities record into `metrics` (new ones by
    default: `resources.metrics`). `pending` names toolboxes whose tools come later (MCP
    servers, listed when the worker runs): `resources.add_tools` adds them."""
    served = (
        load_profiles(settings.worker.profiles_file)
        if profiles is None
        else checked_profiles(profiles, "the worker builder's profiles")
    )
    held = held_by(served.values())
    file = settings.worker.mcp_servers_file
    listed = load_mcp_config(file) if file else None
    where = "servers file and the profiles"
    servers = merged_servers(listed.servers if listed else [], held.mcp_servers, where)
    agents = merged_servers(listed.remote_agents if listed else [], held.remote_agents, where)
    boxes = load_toolboxes(settings, [*toolboxes, *held.toolboxes])
    if faults is None and (settings.faults.block_at or settings.faults.fail_at):
        faults = fault_hook(
            block_at=settings.faults.block_at,
            fail_at=settings.faults.fail_at,
            marker_dir=settings.faults.marker_dir,
        )
    hook = faults or no_faults
    sealer = Sealer.from_b64(worker_seal_keys(settings))
    engine, ctx = store_context(settings.database.resolved_url(), sealer, faults=hook)
    ctx = replace(ctx, completion_hooks=(*ctx.completion_hooks, completion_hook(sealer)))
    # Sync tools run here, as many at once as the worker runs activities.
    pool = ThreadPoolExecutor(settings.worker.max_concurrent_activities, TOOL_THREAD_PREFIX)
    store = store_pool(
        settings.worker.fast_paths,
        min(settings.worker.max_concurrent_activities, pooled_connections(engine)),
        STORE_THREAD_PREFIX,
    )
    resources = WorkerResources(engine, ctx, executor=pool, store_executor=store)
    resources.mcp_servers = servers
    resources.remote_agents = agents
    if metrics is not None:
        resources.metrics = metrics
    watch_store(resources.metrics.registry, ctx)
    late = {*pending, *(s.name for s in servers), *(a.name for a in agents)}
    try:
        _compose(resources, settings, boxes, served, providers, hook, late, held.tools)
    except BaseException:
        resources.close()
        raise
    return resources


def _compose(
    resources: WorkerResources,
    settings: Settings,
    boxes: list[Toolbox],
    profiles: Mapping[str, Profile],
    providers: Mapping[str, ModelProvider] | None,
    hook: Callable[[str], None],
    pending: set[str],
    loose: list[Tool],
) -> None:
    ctx, pool = resources.ctx, resources.executor
    assert pool is not None
    calls = resources.metrics.calls
    registry = _registry(resources, settings, boxes, pending, loose)
    catalog = ProfileCatalog(profiles, registry)
    models = load_providers(settings, extra=providers)
    policies = _checked(settings, profiles, models, catalog, registry)
    resources.catalog = catalog
    resources.served = list(profiles.values())
    resources.payload_keys = payload_key_ids(settings)
    m = resources.metrics
    runs, steps = MeteredRunStore(ctx, m), ToolStepStore(ctx)
    completion = Completion(ctx, ended=run_ended(m), turned=partial(count_turn, m))
    live = LiveStore(ctx)  # model calls' and remote agents' live output
    model = ModelActivities(
        providers=traced_providers(metered_providers(models.providers, calls)),
        runs=runs,
        completion=completion,
        faults=hook,
        answer_levels=models.answer_levels,
        prices=models.prices,
        failed_over=fallback_counter(calls, models.providers),
        live=live,
    )
    tool = ToolActivities(registry=registry, steps=steps, faults=hook)
    write = WriteActivities(ctx=ctx, registry=registry, executor=pool, faults=hook,
                            claimed=m.writes_fenced.inc, live=live)  # fmt: skip
    probes = ReconcileActivities(
        ctx=ctx, registry=registry, faults=hook,
        answered=lambda verdict: m.writes_reconciled.labels(verdict).inc(),
    )  # fmt: skip
    groups: list[ActivityGroup] = [
        _run_activities(settings, runs, catalog, registry),
        SettleActivities(Settle(ctx, ended=run_ended(m))),
        model,
        tool,
        FenceActivities(ctx=ctx, faults=hook, interrupted=m.writes_unknown.inc),
        write,
        probes,
        PauseActivities(ctx, approval_wait=m.approval_wait.observe),
        PolicyActivities(ctx, policies),
        AnswerActivities(ctx, answered=lambda answer: m.writes_answered.labels(answer).inc()),
        A2AActivities(ctx),
        ChildActivities(runs=runs, steps=steps, faults=hook),
    ]
    _record(resources, registry, model, [tool, write, probes], groups)
    resources.provider_names = sorted(models.providers)
    resources.profile_names = sorted(profiles)


def _checked(
    settings: Settings,
    profiles: Mapping[str, Profile],
    models: LoadedProviders,
    catalog: ProfileCatalog,
    registry: ToolRegistry,
) -> dict[str, PolicySet]:
    """What the profiles ask of the models and the policies, checked before anything
    serves (a ConfigError stops the worker); the approval policies the worker serves."""
    check_models(profiles.values(), models.providers)
    check_budgets(profiles.values(), models.prices)
    check_ceiling(profiles.values(), settings.limits.max_iterations_ceiling)
    policies = served_policies(settings.worker.policies_file, profiles)
    check_policies(policies, catalog, registry)  # a policy reading no such argument: stop
    return policies


def _run_activities(
    settings: Settings, runs: MeteredRunStore, catalog: ProfileCatalog, registry: ToolRegistry
) -> RunActivities:
    """The begin: resolves a profile, routes its calls to their queues and inserts the run."""
    routes = Routes(
        settings.worker.model_task_queue.strip(),
        settings.worker.tool_task_queue.strip(),
        settings.worker.toolbox_queue_map(),
    )
    return RunActivities(
        runs=runs,
        profiles=catalog,
        tools=registry,
        limits=settings.limits,
        routes=routes,
    )


def _record(
    resources: WorkerResources,
    registry: ToolRegistry,
    model: ModelActivities,
    tools: list[ActivityGroup],
    groups: list[ActivityGroup],
) -> None:
    """What the worker registers: every activity, and the model and tool ones by queue."""
    resources.registry = registry
    resources.model_activities = model.activities()
    resources.tool_activities = [act for group in tools for act in group.activities()]
    resources.activities = [act for group in groups for act in group.activities()]


def _registry(
    resources: WorkerResources,
    settings: Settings,
    boxes: list[Toolbox],
    pending: set[str],
    loose: list[Tool],
) -> ToolRegistry:
    """Every tool the worker serves: the loose ones and each toolbox's, built on the pool."""
    ctx, pool, calls = resources.ctx, resources.executor, resources.metrics.calls
    assert pool is not None
    tool_ctx = ToolboxContext(
        settings=settings,
        executor=pool,
        sessions=ctx.sessions,
        read_sessions=ctx.read_sessions or ctx.sessions,
    )
    return ToolRegistry(
        wrapped(LOOSE, [on_pool(t, pool) for t in loose], calls),
        groups={box.name: wrapped(box.name, box.build(tool_ctx), calls) for box in boxes},
        pending=pending,
    )


def payload_key_ids(settings: Settings) -> list[str]:
    """The ids of the payload keys this worker decrypts with, active first (none: []),
    which it registers so a client it could not read is refused before it starts a run."""
    spec = settings.payload_keys_spec()
    if not spec:
        return []
    keys, active = parse_keys(spec)
    return [active, *(k for k in keys if k != active)]
