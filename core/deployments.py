"""Worker deployment versions: make a build id current once its workers poll. The same as
`temporal worker deployment set-current-version --deployment-name N --build-id B`."""

import asyncio

from temporalio.api.workflowservice.v1 import SetWorkerDeploymentCurrentVersionRequest
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from agentrt.contracts.errors import ConfigError

_TRANSIENT = (
    RPCStatusCode.NOT_FOUND,
    RPCStatusCode.FAILED_PRECONDITION,
    RPCStatusCode.CANCELLED,
    RPCStatusCode.DEADLINE_EXCEEDED,
    RPCStatusCode.UNAVAILABLE,
    RPCStatusCode.UNKNOWN,
    RPCStatusCode.INTERNAL,
)


async def set_current_version(
    client: Client, deployment_name: str, build_id: str, *, within: float = 30.0
) -> None:
    """New runs go to `build_id` from now on; pinned runs stay where they began. Waits (up
    to `within` seconds) for the version's workers to be seen by the server."""
    request = SetWorkerDeploymentCurrentVersionRequest(
        namespace=client.namespace, deployment_name=deployment_name, build_id=build_id
    )
    deadline = asyncio.get_running_loop().time() + within
    while True:
        try:
            await client.workflow_service.set_worker_deployment_current_version(request)
            return
        except RPCError as err:
            # The server learns of a version from its pollers: not found until they poll.
            # It runs the change as an internal workflow, which a busy dev server has been
            # seen to fail with "operation was canceled": the change is idempotent, so any
            # server-side failure is retried within the bound (a refusal is not).
            retry = err.status in _TRANSIENT
            if not retry or asyncio.get_running_loop().time() > deadline:
                raise ConfigError(
                    f"cannot make build {build_id!r} of deployment {deployment_name!r} "
                    f"current: {err.message} (are its workers running?)"
                ) from None
            await asyncio.sleep(0.2)
