"""The memory section's worker, in its own process so that its RSS is the worker's alone:
`python -m bench.memworker ADDRESS TASK_QUEUE DATABASE_URL SEAL_KEYS DATA_DIR`.

Prints `ready` once polling, and stops when its stdin closes.
"""

import asyncio
import sys
from pathlib import Path

from temporalio.client import Client

from agentrt.core.temporal import data_converter
from bench.harness import bench_settings, running_worker


async def serve(address: str, task_queue: str, url: str, keys: str, data_dir: str) -> None:
    client = await Client.connect(address, data_converter=data_converter())
    settings = bench_settings(database_url=url, seal_keys=keys, data_dir=Path(data_dir))
    settings = settings.replace(temporal={"task_queue": task_queue})
    async with running_worker(client, settings):
        print("ready", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)


if __name__ == "__main__":
    asyncio.run(serve(*sys.argv[1:6]))
