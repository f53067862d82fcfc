"""The model activity on the workflow's terms, against the real store: the plan it uses is
the one its request carries (model, privacy level, budget), not the run's recorded one,
and it completes the run exactly when contracts.turn.turn_end says ANSWER."""

import uuid

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from agentrt.activities.model import ModelActivities
from agentrt.activities.settle.completion import Completion
from agentrt.contracts.enums import EventKind, RunStatus
from agentrt.contracts.errors import ErrorType
from agentrt.contracts.messages import ProviderReply, ProviderRequest, Usage
from agentrt.contracts.profiles import Budget
from agentrt.contracts.run import AnswerTerms, ModelRequest
from agentrt.store.runs.record import RunStore
from agentrt.workers.compose import WorkerResources
from tests.store.test_step_rows import _run  # recorded at `full`, answers kept in full


class Answering:
    """A model provider (the outside world) that answers every call, and notes the model
    each call was for."""

    def __init__(self) -> None:
        self.models: list[str] = []

    async def complete(self, request: ProviderRequest) -> ProviderReply:
        self.models.append(request.model)
        return ProviderReply(content="the answer", usage=Usage(prompt_tokens=4, cost_usd=0.0))


def _request(run_id: str, *, budget: Budget | None = None) -> ModelRequest:
    return ModelRequest(
        run_id=run_id,
        privacy="metadata",  # stricter than the run's recorded level: the request's counts
        round=1,
        sequence=1,
        offer_tools=True,
        model="answering:chosen",
        fallback_model=None,
        answer=AnswerTerms(
            sequence=2, usage=Usage(prompt_tokens=6), pause_for_input=False, budget=budget
        ),
    )


def _activities(parts: WorkerResources, provider: Answering) -> ModelActivities:
    return ModelActivities(
        providers={"answering": provider},
        runs=RunStore(parts.ctx),
        completion=Completion(parts.ctx),
    )


async def test_the_answer_completes_the_run_on_the_requests_plan(parts: WorkerResources) -> None:
    run_id, provider = _run(parts), Answering()
    turn = await ActivityEnvironment().run(_activities(parts, provider).complete, _request(run_id))
    assert provider.models == ["chosen"]
    assert turn.settled is not None and turn.settled.applied
    runs = RunStore(parts.ctx)
    view = runs.get(run_id)
    assert view is not None and view.status is RunStatus.COMPLETED and view.answer == "the answer"
    assert view.prompt_tokens == 10  # the spend before the call (terms) and the call's
    llm = next(e for e in runs.events(run_id) if e.kind is EventKind.LLM)
    assert llm.payload["content_withheld"] is True and "content" not in llm.payload


async def test_a_turn_that_spends_the_budget_is_recorded_and_completes_nothing(
    parts: WorkerResources,
) -> None:
    run_id = _run(parts)
    request = _request(run_id, budget=Budget(max_tokens=10))  # 6 before + 4 = the limit
    turn = await ActivityEnvironment().run(_activities(parts, Answering()).complete, request)
    assert turn.settled is None
    runs = RunStore(parts.ctx)
    assert runs.status(run_id) is RunStatus.RUNNING
    assert [e.kind for e in runs.events(run_id)] == [EventKind.RUN_STARTED, EventKind.LLM]


async def test_a_run_with_no_row_is_refused_before_the_provider_is_asked(
    parts: WorkerResources,
) -> None:
    provider = Answering()
    with pytest.raises(ApplicationError) as refused:
        await ActivityEnvironment().run(
            _activities(parts, provider).complete, _request(str(uuid.uuid4()))
        )
    assert refused.value.type == ErrorType.RUN_NOT_FOUND.value and refused.value.non_retryable
    assert provider.models == []
