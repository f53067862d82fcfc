"""Composition root: settings → engine, store, providers, tools → activity objects."""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from sqlalchemy import Engine

from agentrt.activities.a2a import A2AActivities
from agentrt.activities.approval import ApprovalActivities
from agentrt.activities.fence import FenceActivities
from agentrt.activities.model import ModelActivities
from agentrt.activities.ports import ModelProvider, no_faults
from agentrt.activities.providers.openai_compat import OpenAICompatProvider
from agentrt.activities.providers.scripted import ScriptedProvider
from agentrt.activities.registry import ProfileCatalog, ToolRegistry
from agentrt.activities.run import RunActivities
from agentrt.activities.toolbox.demo import demo_tools
from agentrt.activities.tools import ToolActivities
from agentrt.activities.write import WriteActivities
from agentrt.core.profiles import load_profiles
from agentrt.core.settings import Settings
from agentrt.store.a2a import A2AStore
from agentrt.store.a2a_project import A2AProjector
from agentrt.store.context import StoreContext
from agentrt.store.demo import DemoWorld
from agentrt.store.fence import FenceStore
from agentrt.store.hitl import HitlStore
from agentrt.store.open import open_store
from agentrt.store.runs import RunStore
from agentrt.store.sealing import Sealer
from agentrt.store.settle import SettleStore
from agentrt.store.tool_steps import ToolStepStore
from agentrt.workers.faults import fault_hook


@dataclass
class Parts:
    engine: Engine
    ctx: StoreContext
    activities: list[Callable[..., Any]] = field(default_factory=list)


def build(
    settings: Settings,
    *,
    providers: Mapping[str, ModelProvider] | None = None,
    faults: Callable[[str], None] | None = None,
) -> Parts:
    if faults is None and (settings.fault_block_at or settings.fault_fail_at):
        faults = fault_hook(
            block_at=settings.fault_block_at,
            fail_at=settings.fault_fail_at,
            marker_dir=settings.fault_marker_dir,
        )
    hook = faults or no_faults
    sealer = Sealer.from_b64(settings.create_seal_key_if_missing())
    engine, ctx = open_store(settings.resolved_database_url(), sealer, faults=hook)
    ctx = replace(ctx, completion_hooks=(*ctx.completion_hooks, A2AStore(ctx).completion_hook))
    registry = ToolRegistry(demo_tools(DemoWorld(ctx)))
    catalog = ProfileCatalog(load_profiles(settings.profiles_file), registry)
    if providers is None:
        providers = default_providers(settings)
    runs, steps, fence = RunStore(ctx), ToolStepStore(ctx), FenceStore(ctx)
    run_acts = RunActivities(runs=runs, settle=SettleStore(ctx), profiles=catalog, tools=registry)
    model_acts = ModelActivities(
        providers=providers, runs=runs, faults=hook, answer_levels=settings.answer_levels()
    )
    tool_acts = ToolActivities(registry=registry, steps=steps, runs=runs, faults=hook)
    fence_acts = FenceActivities(fence=fence, faults=hook)
    write_acts = WriteActivities(
        registry=registry, fence=fence, steps=steps, runs=runs, faults=hook
    )
    approval_acts = ApprovalActivities(hitl=HitlStore(ctx), runs=runs)
    return Parts(
        engine,
        ctx,
        [
            run_acts.begin,
            run_acts.complete,
            run_acts.fail,
            model_acts.complete,
            tool_acts.execute,
            tool_acts.refuse,
            fence_acts.stamp,
            fence_acts.resolve,
            write_acts.execute,
            approval_acts.suspend,
            approval_acts.resume,
            approval_acts.await_input,
            approval_acts.add_input,
            A2AActivities(projector=A2AProjector(ctx)).project,
        ],
    )


def default_providers(settings: Settings) -> dict[str, ModelProvider]:
    scripted = ScriptedProvider.from_file(settings.rules_file)
    names = [n.strip() for n in settings.scripted_providers.split(",") if n.strip()]
    providers: dict[str, ModelProvider] = dict.fromkeys(names or ["scripted"], scripted)
    if settings.openai_api_key is not None:
        providers["openai"] = OpenAICompatProvider(
            api_key=settings.openai_api_key.get_secret_value(), base_url=settings.openai_base_url
        )
    return providers
