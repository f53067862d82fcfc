"""The worker process: `agentrt-worker` / `python -m workers`. Runs until SIGTERM/SIGINT,
then stops polling and lets in-flight activities finish (graceful drain)."""

import asyncio
import logging
import signal

from agentrt.activities.toolbox.box import Toolbox
from agentrt.activities.toolbox.mcp import open_mcp_toolboxes
from agentrt.activities.toolbox.mcp_config import load_mcp_config
from agentrt.contracts.errors import AgentRuntimeError
from agentrt.core.settings import Settings
from agentrt.core.temporal import connect
from agentrt.workers.builder import make_worker, sandbox_runner
from agentrt.workers.compose import build

__all__ = ["main", "make_worker", "sandbox_runner", "serve"]  # make_worker: its former home

logger = logging.getLogger("workers")


async def serve(settings: Settings, stop: asyncio.Event) -> None:
    # The store, the toolboxes and the MCP servers first: their errors need no Temporal.
    mcp = load_mcp_config(settings.mcp_servers_file) if settings.mcp_servers_file else None
    mcp_boxes, close_mcp = await open_mcp_toolboxes(mcp)
    try:
        servers = [Toolbox(name, tools) for name, tools in mcp_boxes]
        with build(settings, toolboxes=servers) as resources:
            client = await connect(
                settings.temporal_address, settings.temporal_namespace, settings.payload_keys_spec()
            )
            async with make_worker(client, resources, settings):
                logger.info(
                    "worker polling %s on %s", settings.task_queue, settings.temporal_address
                )
                await stop.wait()
                logger.info("draining")
    finally:
        await close_mcp()


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
