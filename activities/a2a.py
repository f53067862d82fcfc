"""A2A projection activity: writes a run's committed state onto its A2A task view and
journal, idempotent per run revision. It reads committed rows only; it never runs the model
or a tool, so retrying it is always safe."""

from typing import Protocol

from temporalio import activity

from agentrt.activities._common import ActivityGroup, db
from agentrt.contracts.a2a import ProjectRequest, ProjectResult
from agentrt.contracts.ids import ACT_A2A_PROJECT


class ProjectedLike(Protocol):
    @property
    def run_revision(self) -> int: ...

    @property
    def events_written(self) -> int: ...


class ProjectorPort(Protocol):
    def project(self, *, run_id: str, task_id: str) -> ProjectedLike: ...


class A2AActivities(ActivityGroup):
    def __init__(self, *, projector: ProjectorPort) -> None:
        self._projector = projector

    @activity.defn(name=ACT_A2A_PROJECT)
    async def project(self, req: ProjectRequest) -> ProjectResult:
        done = await db(self._projector.project, run_id=req.run_id, task_id=req.task_id)
        return ProjectResult(run_revision=done.run_revision, events_written=done.events_written)
