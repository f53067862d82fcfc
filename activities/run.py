"""Run lifecycle activities: begin (insert the run) and settle (complete / fail)."""

import asyncio
import json
from typing import Any

from temporalio import activity

from agentrt.activities._common import ActivityGroup, db, fatal, privacy_of, snapshot_of
from agentrt.activities.completion import complete_run
from agentrt.activities.guardrails import check
from agentrt.activities.ports import RunPort, SettlePort
from agentrt.activities.registry import ProfileCatalog, Routes, ToolRegistry
from agentrt.contracts.enums import EventKind, Outcome, RunStatus, TerminationReason
from agentrt.contracts.errors import ErrorType
from agentrt.contracts.ids import ACT_RUN_BEGIN, ACT_RUN_COMPLETE, ACT_RUN_FAIL
from agentrt.contracts.profiles import RunPlan, ToolPlan, clamp_iterations
from agentrt.contracts.redaction import redact_text
from agentrt.contracts.run import (
    DEFAULT_MAX_PROMPT_CHARS,
    BeginRequest,
    BeginResult,
    CompleteRequest,
    FailRequest,
    Transition,
    prompt_over_cap,
)

MAX_DETAIL_CHARS = 500


class RunActivities(ActivityGroup):
    def __init__(
        self,
        *,
        runs: RunPort,
        settle: SettlePort,
        profiles: ProfileCatalog,
        tools: ToolRegistry,
        routes: Routes | None = None,
        max_prompt_chars: int = DEFAULT_MAX_PROMPT_CHARS,
    ) -> None:
        self._routes = routes or Routes()
        self._max_prompt_chars = max_prompt_chars
        self._runs = runs
        self._settle = settle
        self._profiles = profiles
        self._tools = tools

    @activity.defn(name=ACT_RUN_BEGIN)
    async def begin(self, req: BeginRequest) -> BeginResult:
        """Resolve the profile and insert the run. Idempotent on the run uuid."""
        # The clients refuse a prompt over the cap; a start that bypassed them (a stock
        # Temporal client) is refused here, before any row is written.
        too_long = prompt_over_cap(req.prompt, self._max_prompt_chars)
        if too_long is not None:
            activity.logger.warning("run %s not begun: %s", req.run_id, too_long)
            raise fatal(too_long, ErrorType.PROMPT_TOO_LONG, expected=True)
        profile = self._profiles.get(req.profile)
        if profile is None:
            activity.logger.warning(
                "run %s not begun: unknown agent profile %r", req.run_id, req.profile
            )
            raise fatal(
                f"unknown agent profile {req.profile!r}", ErrorType.UNKNOWN_PROFILE, expected=True
            )
        plans: list[ToolPlan] = []
        specs: list[dict[str, Any]] = []
        for name in profile.tools:
            tool = self._tools.get(name)
            assert tool is not None  # the catalogue checked this at start-up
            bound = profile.approval == "all" or (
                profile.approval == "writes" and tool.effect.value != "READ_ONLY"
            )
            queue = self._routes.tool(self._tools.owner(name))
            plans.append(
                ToolPlan(name=name, effect=tool.effect, requires_approval=bound, task_queue=queue)
            )
            specs.append(tool.spec.model_dump())
        # Off the event loop: the worker's other runs go on while a long prompt is read.
        checked = await asyncio.to_thread(
            check, req.prompt, profile.guardrails.input, profile.guardrails
        )
        plan = RunPlan(
            profile=profile.name,
            model=profile.model,
            max_iterations=clamp_iterations(req.max_iterations, profile.max_iterations),
            tools=plans,
            privacy=profile.privacy,
            timeouts=profile.timeouts,
            approval_timeout_seconds=profile.approval_timeout_seconds,
            four_eyes=profile.four_eyes,
            unattested_decisions=profile.unattested_decisions,
            answer_level=profile.answer_level,
            fallback_model=profile.fallback_model,
            budget=profile.budget,
            model_task_queue=self._routes.model(profile.model),
        )
        snapshot = {
            "instructions": profile.instructions,
            "tools": specs,
            "guardrails": profile.guardrails.model_dump(),
            "plan": plan.model_dump(mode="json"),
        }
        await db(
            self._runs.begin,
            run_id=req.run_id,
            profile=profile.name,
            snapshot=json.dumps(snapshot),
            prompt=checked.text,
            initiator=req.initiator,
            privacy=profile.privacy,
        )
        return BeginResult(plan=plan, next_sequence=1, guardrail=checked.verdict.name)

    @activity.defn(name=ACT_RUN_COMPLETE)
    async def complete(self, req: CompleteRequest) -> Transition:
        return await complete_run(self._runs, self._settle, req)

    @activity.defn(name=ACT_RUN_FAIL)
    async def fail(self, req: FailRequest) -> Transition:
        privacy = await privacy_of(self._runs, req)
        cancelled = req.status is RunStatus.CANCELLED
        outcome = Outcome.CANCELLED if cancelled else req.outcome
        extra: dict[str, Any] | None = {"by": req.actor, "note": req.note} if cancelled else None
        if req.reason is TerminationReason.BUDGET_EXHAUSTED:
            # The limits beside the spend (settle adds the totals), from the recorded plan.
            snap = await snapshot_of(self._runs, req.run_id)
            budget = None if snap.plan is None else snap.plan.budget
            extra = {"budget": None if budget is None else budget.model_dump(mode="json")}
        if req.error_detail and not cancelled:
            extra = {**(extra or {}), "error": redact_text(req.error_detail, MAX_DETAIL_CHARS)}
        settled = await db(
            self._settle.fail,
            run_id=req.run_id,
            sequence=req.sequence,
            reason=req.reason,
            status=req.status,
            outcome=outcome,
            iterations=req.iterations,
            usage=req.usage,
            error_type=req.error_type,
            privacy=privacy,
            event_kind=EventKind.CANCEL if cancelled else EventKind.RUN_FAILED,
            extra=extra,
        )
        if not settled.applied:
            activity.logger.info("run %s already settled as %s", req.run_id, settled.status)
        return settled
