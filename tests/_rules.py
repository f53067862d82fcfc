"""A scripted model with one rule (a prompt with the word calls one tool, then answers),
a profile that runs on it, and a worker in this process that serves only that profile."""

import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, NamedTuple

from temporalio.client import Client

from agentrt import AgentRuntime, Profile, Settings, Toolbox, build_worker
from agentrt.activities.providers.scripted import RuleSet, ScriptedProvider
from agentrt.store.runs.record import RunStore
from agentrt.workers.metrics import WorkerMetrics
from tests.conftest import profiles_in_code


def one_call(
    word: str, tool: str, arguments: dict[str, Any], answer: str, default_reply: str
) -> RuleSet:
    """The rule named after `word`: on a prompt containing it, call `tool` with
    `arguments`, then answer `answer`; any other prompt gets `default_reply`."""
    return RuleSet.model_validate(
        {
            "default_reply": default_reply,
            "rules": [
                {
                    "name": word,
                    "match": {"contains": word},
                    "steps": [
                        {"tool_calls": [{"name": tool, "arguments": arguments}]},
                        {"text": answer},
                    ],
                }
            ],
        }
    )


def scripted_profile(
    name: str, instructions: str, toolbox: str, task_queue: str, **more: Any
) -> Profile:
    """A profile on the scripted model with one toolbox and no approvals, on `task_queue`;
    its name is `name` made unique."""
    return Profile(
        name=f"{name}-{uuid.uuid4().hex[:8]}",
        instructions=instructions,
        model="scripted:demo",
        toolboxes=[toolbox],
        approval="none",
        task_queue=task_queue,
        **more,
    )


def new_queue() -> str:
    """A task queue of a test's own: no other test's worker polls it."""
    return f"tq-{uuid.uuid4().hex[:10]}"


class Scripted(NamedTuple):
    runtime: AgentRuntime
    runs: RunStore
    profile: str  # the profile's unique name
    metrics: WorkerMetrics  # what the worker recorded


@asynccontextmanager
async def scripted_worker(
    client: Client,
    settings: Settings,
    tmp_path: Path,
    profile: Profile,
    boxes: list[Toolbox],
    rules: RuleSet,
    faults: Callable[[str], None] | None = None,
) -> AsyncIterator[Scripted]:
    """A worker in this process on `profile`'s task queue, serving it alone with `boxes`
    and the scripted model following `rules` (and `faults`, the test's fault hook); none
    of the suite's profile files is read."""
    queue = profile.task_queue
    assert queue is not None, "a scripted profile names its own task queue"
    worker, resources = build_worker(
        client, profiles_in_code(settings, queue, tmp_path), toolboxes=boxes,
        providers={"scripted": ScriptedProvider(rules)}, profiles=[profile], faults=faults,
    )  # fmt: skip
    with resources:
        async with worker:
            runs = RunStore(resources.ctx)
            yield Scripted(AgentRuntime(client, runs, queue), runs, profile.name, resources.metrics)
