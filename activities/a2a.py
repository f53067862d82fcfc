"""A2A projection activity: writes a run's committed state onto its A2A task view and
journal, idempotent per run revision. (Being implemented with the A2A issue.)"""

from temporalio import activity

from contracts.a2a import ProjectRequest, ProjectResult
from contracts.ids import ACT_A2A_PROJECT


class A2AActivities:
    @activity.defn(name=ACT_A2A_PROJECT)
    async def project(self, req: ProjectRequest) -> ProjectResult:
        raise NotImplementedError("the A2A projector lands with the A2A issue")
