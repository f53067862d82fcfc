"""The worker process: `agentrt-worker` / `python -m workers`. Runs until SIGTERM/SIGINT,
then stops polling and lets in-flight activities finish (graceful drain)."""

import asyncio
import logging
import signal
from datetime import timedelta

from temporalio.client import Client
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from agentrt.contracts.errors import AgentRuntimeError
from agentrt.core.settings import Settings
from agentrt.core.temporal import connect
from agentrt.workers.compose import Parts, build
from agentrt.workflows.agent_run import AgentRunWorkflow

logger = logging.getLogger("workers")


def sandbox_runner() -> SandboxedWorkflowRunner:
    """Pure wire types are shared with the sandbox, so one class object crosses it."""
    return SandboxedWorkflowRunner(
        restrictions=SandboxRestrictions.default.with_passthrough_modules("agentrt.contracts")
    )


def make_worker(client: Client, parts: Parts, settings: Settings) -> Worker:
    return Worker(
        client,
        task_queue=settings.task_queue,
        workflows=[AgentRunWorkflow],
        workflow_runner=sandbox_runner(),
        activities=parts.activities,
        max_concurrent_activities=settings.max_concurrent_activities,
        max_concurrent_workflow_tasks=settings.max_concurrent_workflow_tasks,
        graceful_shutdown_timeout=timedelta(seconds=settings.graceful_shutdown_seconds),
        # After a worker dies, its cached runs move to another worker after this long.
        sticky_queue_schedule_to_start_timeout=timedelta(seconds=3),
    )


async def serve(settings: Settings, stop: asyncio.Event) -> None:
    parts = build(settings)
    try:
        client = await connect(settings)
        worker = make_worker(client, parts, settings)
        async with worker:
            logger.info("worker polling %s on %s", settings.task_queue, settings.temporal_address)
            await stop.wait()
            logger.info("draining")
    finally:
        parts.engine.dispose()


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    settings = Settings()

    async def _run() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        await serve(settings, stop)

    try:
        asyncio.run(_run())
    except AgentRuntimeError as exc:
        raise SystemExit(f"agentrt-worker: {exc}") from None


if __name__ == "__main__":
    main()
