"""One benchmark environment: a dev server, the production worker plus the baseline, a store.

The worker is configured as `workers.main.make_worker` configures it (same sandbox, same
limits) and also hosts the baseline workflow and its activities, so both kinds of run share
one task queue, one worker process and one dev server.
"""

import os
import sys
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from datetime import timedelta
from functools import cached_property
from pathlib import Path

from temporalio.client import Client
from temporalio.common import SearchAttributeKey
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from agentrt.activities.toolbox.box import Toolbox
from agentrt.contracts.ids import SA_PROFILE, SA_RUN_STATUS
from agentrt.contracts.profiles import MAX_ITERATIONS_CEILING
from agentrt.core.devserver import temporal_cli
from agentrt.core.settings import Settings
from agentrt.core.temporal import data_converter
from agentrt.starter.facade import AgentRuntime
from agentrt.store.runs.record import RunStore
from agentrt.workers.builder import sandbox_runner, worker_interceptors
from agentrt.workers.compose import WorkerResources, build
from agentrt.workflows.agent_run import AgentRunWorkflow
from bench.bare_activities import BareActivities
from bench.bare_workflow import BareWorkflow, TimerWorkflow
from bench.loop_activities import LoopActivities, create_tables
from bench.loop_workflow import LoopWorkflow

HERE = Path(__file__).resolve().parent
RULES_FILE = HERE / "rules.yaml"
PROFILES_FILE = HERE / "profiles.yaml"
BENCH_CEILING = 1000
RESULTS_DIR = HERE / "results"  # git-ignored
SERVER_LOG = RESULTS_DIR / "devserver.log"


@dataclass(frozen=True)
class Bench:
    client: Client
    parts: WorkerResources
    runs: RunStore
    task_queue: str
    ceiling: int = MAX_ITERATIONS_CEILING  # the installation's (AGENTRT_MAX_ITERATIONS_CEILING)

    @cached_property
    def runtime(self) -> AgentRuntime:
        """One facade for every agent run, as a client application holds one: its check
        that a worker polls the queue is made once, not before every start."""
        return AgentRuntime(
            self.client, self.runs, self.task_queue, max_iterations_ceiling=self.ceiling
        )


def bench_settings(*, database_url: str, seal_keys: str, data_dir: Path) -> Settings:
    return Settings().replace(
        database={"url": database_url, "data_dir": data_dir},
        privacy={"seal_keys": seal_keys},
        providers={"rules_file": RULES_FILE},
        worker={"profiles_file": PROFILES_FILE},
        temporal={"task_queue": f"bench-{uuid.uuid4().hex[:10]}"},
        # Raised explicitly, as an installation running long agents does: the history
        # section's long run and the long-run section ask for more than 20 rounds.
        limits={"max_iterations_ceiling": BENCH_CEILING},
    )


@contextmanager
def _child_output_to(log: Path) -> Iterator[None]:
    """The dev server inherits our stdout/stderr and prints a banner and warnings there; point
    both at a log file while it is spawned, so stdout carries only the results."""
    log.parent.mkdir(parents=True, exist_ok=True)
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with log.open("ab") as out:
        os.dup2(out.fileno(), 1)
        os.dup2(out.fileno(), 2)
    try:
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        os.close(saved[0])
        os.close(saved[1])


@asynccontextmanager
async def dev_server(
    server_args: Sequence[str], *, db_file: Path | None = None, log: Path = SERVER_LOG
) -> AsyncIterator[Client]:
    """A fresh dev server (in memory unless db_file is given), stopped on exit."""
    with _child_output_to(log):
        env = await WorkflowEnvironment.start_local(
            dev_server_existing_path=temporal_cli(),
            data_converter=data_converter(),
            dev_server_extra_args=list(server_args),
            dev_server_database_filename=str(db_file) if db_file is not None else None,
            search_attributes=[
                SearchAttributeKey.for_keyword(SA_RUN_STATUS),
                SearchAttributeKey.for_keyword(SA_PROFILE),
            ],
        )
    async with env:
        yield env.client


def bench_worker(client: Client, parts: WorkerResources, settings: Settings) -> Worker:
    """workers.main.make_worker's configuration plus the baseline, its interceptors included
    (activity timing; tracing only where a tracer provider is installed, as in production:
    the bench installs none). Spelled out because the SDK registers a worker with its client
    when it is constructed: building make_worker's worker only to copy its config() fails as
    a duplicate registration."""
    bare = BareActivities(parts.ctx)
    loop = LoopActivities(parts.ctx)
    return Worker(
        client,
        task_queue=settings.temporal.task_queue,
        workflows=[AgentRunWorkflow, BareWorkflow, TimerWorkflow, LoopWorkflow],
        workflow_runner=sandbox_runner(client.data_converter),
        activities=[
            *parts.activities,
            bare.noop,
            bare.db_write,
            loop.model,
            loop.model_storeless,
            loop.tool,
        ],
        activity_executor=parts.executor,
        max_concurrent_activities=settings.worker.max_concurrent_activities,
        max_concurrent_workflow_tasks=settings.worker.max_concurrent_workflow_tasks,
        graceful_shutdown_timeout=timedelta(seconds=settings.worker.graceful_shutdown_seconds),
        sticky_queue_schedule_to_start_timeout=timedelta(seconds=3),
        interceptors=worker_interceptors(client, parts),
    )


@asynccontextmanager
async def running_worker(
    client: Client, settings: Settings, toolboxes: Sequence[Toolbox] = ()
) -> AsyncIterator[Bench]:
    parts = build(settings, toolboxes=toolboxes)
    create_tables(parts.engine)
    try:
        async with bench_worker(client, parts, settings):
            yield Bench(
                client,
                parts,
                RunStore(parts.ctx),
                settings.temporal.task_queue,
                settings.limits.max_iterations_ceiling,
            )
    finally:
        parts.close()


@asynccontextmanager
async def scratch_worker(prefix: str, *, postgres: bool) -> AsyncIterator[tuple[Bench, str]]:
    """A dev server and a worker on a store of their own: a SQLite file in a temporary
    folder, or a schema of its own in the PostgreSQL test database; and the store's URL."""
    from agentrt.core.devserver import extra_args
    from agentrt.store.db.sealing import Sealer
    from bench.database import bench_database

    dsn = Settings().database.postgres_dsn if postgres else None
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp, bench_database(Path(tmp), dsn) as url:
        settings = bench_settings(
            database_url=url, seal_keys=f"bench:{Sealer.new_key_b64()}", data_dir=Path(tmp)
        )
        async with dev_server(extra_args()) as client, running_worker(client, settings) as b:
            yield b, url
