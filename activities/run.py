"""The run's begin: resolve the profile into the run plan and insert the run. (Its end:
activities/settle/ (completion.py and the settle).)"""

from temporalio import activity

from agentrt.activities._common import ActivityGroup, db, fatal
from agentrt.activities.guardrails import checked as checked_text
from agentrt.activities.ports import attempt_bound_of, probe_of, reserve_of
from agentrt.activities.registry import ProfileCatalog, Routes, ToolRegistry
from agentrt.contracts.agents import agent_spec
from agentrt.contracts.budget import capped, output_bound
from agentrt.contracts.enums import ToolEffect
from agentrt.contracts.errors import ErrorType
from agentrt.contracts.ids import ACT_RUN_BEGIN
from agentrt.contracts.messages import ToolSpec
from agentrt.contracts.plan import (
    RunPlan,
    ToolPlan,
)
from agentrt.contracts.profiles import (
    Profile,
    clamp_iterations,
    over_ceiling,
)
from agentrt.contracts.run import (
    BeginRequest,
    BeginResult,
    prompt_over_cap,
)
from agentrt.contracts.snapshot import SnapshotRecord
from agentrt.core.settings_runs import LimitSettings
from agentrt.store.runs.record import NewRun, RunStore


class RunActivities(ActivityGroup):
    def __init__(
        self,
        *,
        runs: RunStore,
        profiles: ProfileCatalog,
        tools: ToolRegistry,
        limits: LimitSettings,
        routes: Routes | None = None,
    ) -> None:
        """`limits`: the worker's prompt cap, rounds ceiling, segment length and bounds on a
        tree of child runs (AGENTRT_MAX_PROMPT_CHARS and its neighbours)."""
        self._limits = limits
        self._routes = routes or Routes()
        self._runs = runs
        self._profiles = profiles
        self._tools = tools

    @activity.defn(name=ACT_RUN_BEGIN)
    async def begin(self, req: BeginRequest) -> BeginResult:
        """Resolve the profile and insert the run. Idempotent on the run uuid."""
        profile = self._refusal_checked(req)
        plans, specs = self._tool_plans(profile)
        # A long prompt is read off the event loop: the worker's other runs go on meanwhile.
        checked = await checked_text(req.prompt, profile.guardrails.input, profile.guardrails)
        budget = capped(profile.budget, req.budget_cap)  # a child's within its share
        plan = RunPlan(
            profile=profile.name,
            model=profile.model,
            max_iterations=clamp_iterations(
                req.max_iterations, profile.max_iterations, self._limits.max_iterations_ceiling
            ),
            tools=plans,
            privacy=profile.privacy,
            timeouts=profile.timeouts,
            approval_timeout_seconds=profile.approval_timeout_seconds,
            four_eyes=profile.four_eyes,
            approval_policy=profile.approval_policy,
            unattested_decisions=profile.unattested_decisions,
            answer_level=profile.answer_level,
            fallback_model=profile.fallback_model,
            budget=budget,
            model_task_queue=self._routes.model(profile.model),
            on_unknown_outcome=profile.on_unknown_outcome,
            max_parallel_tools=profile.max_parallel_tools,
            reconcile_timeout_seconds=profile.reconcile_timeout_seconds,
            output_schema=profile.output_schema,
            output_retries=profile.output_retries,
            segment_rounds=self._limits.segment_rounds,
            max_output_tokens=output_bound(profile, budget),
            max_agent_depth=self._limits.max_agent_depth,
            max_children=self._limits.max_children_per_run,
        )
        snapshot = SnapshotRecord(
            instructions=profile.instructions, tools=specs, guardrails=profile.guardrails, plan=plan
        )
        new = NewRun(
            run_id=req.run_id,
            profile=profile.name,
            snapshot=snapshot,
            prompt=checked.text,
            initiator=req.initiator,
            privacy=profile.privacy,
            parent_run_id=req.parent_run_id,
        )
        await db(self._runs.begin, new)
        return BeginResult(plan=plan, next_sequence=1, guardrail=checked.verdict.name)

    def _refusal_checked(self, req: BeginRequest) -> Profile:
        """The run's profile, or a typed refusal before any row is written."""
        # The clients refuse a prompt over the cap; a start that bypassed them (a stock
        # Temporal client) is refused here, before any row is written.
        too_long = prompt_over_cap(req.prompt, self._limits.max_prompt_chars)
        if too_long is not None:
            activity.logger.warning("run %s not begun: %s", req.run_id, too_long)
            raise fatal(too_long, ErrorType.PROMPT_TOO_LONG, expected=True)
        ceiling = self._limits.max_iterations_ceiling
        over = None if req.max_iterations is None else over_ceiling(req.max_iterations, ceiling)
        if over is not None:
            activity.logger.warning("run %s not begun: %s", req.run_id, over)
            raise fatal(over, ErrorType.ITERATIONS_OVER_CEILING, expected=True)
        profile = self._profiles.get(req.profile)
        if profile is None:
            activity.logger.warning(
                "run %s not begun: unknown agent profile %r", req.run_id, req.profile
            )
            raise fatal(
                f"unknown agent profile {req.profile!r}", ErrorType.UNKNOWN_PROFILE, expected=True
            )
        return profile

    def _tool_plans(self, profile: Profile) -> tuple[list[ToolPlan], list[ToolSpec]]:
        """Each tool's plan (effect, approval, queue, probe, attempt bound) and its spec."""
        plans: list[ToolPlan] = []
        specs: list[ToolSpec] = []
        for name in profile.tools:
            tool = self._tools.get(name)
            assert tool is not None  # the catalogue checked this at start-up
            bound = profile.approval_binds(tool.effect)
            queue = self._routes.tool(self._tools.owner(name))
            plans.append(
                ToolPlan(
                    name=name,
                    effect=tool.effect,
                    requires_approval=bound,
                    task_queue=queue,
                    reconcile=probe_of(tool) is not None,
                    attempt_seconds=attempt_bound_of(tool)
                    if tool.effect is ToolEffect.NON_IDEMPOTENT_WRITE
                    else None,
                    reserve=reserve_of(tool),
                )
            )
            specs.append(tool.spec)
        for name in profile.agents:  # each child agent, as a tool (contracts/agents.py)
            child = self._profiles.get(name)
            assert child is not None  # the profiles' load checked this (check_agents)
            effect = self._profiles.agent_effect(name, self._tools)
            plans.append(
                ToolPlan(
                    name=name,
                    effect=effect,
                    requires_approval=profile.approval_binds(effect),
                    task_queue=child.task_queue,
                    agent=name,
                )
            )
            specs.append(agent_spec(child))
        return plans, specs
