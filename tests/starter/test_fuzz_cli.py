"""A seeded slice of the fuzz job's CLI surface (bench/fuzz_temporal.py): generated
`agentrt` argument lists against a waiting and an ended run. Exit codes are 0, 1 or 2,
nothing prints a traceback, and a refused command (2) changes no row."""

import pytest
from temporalio.worker import Worker

from agentrt.starter.facade import AgentRuntime
from agentrt.workers.compose import WorkerResources
from bench.fuzz import waiting_runs
from bench.fuzz_temporal import cli_argvs, cli_surface
from tests._fuzz import fuzz_slice
from tests.starter.test_cli import cli_env  # noqa: F401  (the CLI's environment)

CASES = 40


@pytest.mark.usefixtures("cli_env")
async def test_fuzzed_cli_arguments_exit_cleanly_and_refusals_change_nothing(
    worker: Worker, runtime: AgentRuntime, parts: WorkerResources
) -> None:
    runs = await waiting_runs(runtime, 1, profile="support")
    ended = await runtime.start("support", "hello", initiator="fuzz")
    argvs = cli_argvs(list(runs), [ended], profile="support")
    for t in await fuzz_slice(cli_surface, parts.engine, argvs, cases=CASES):
        assert t.rejected > 0, t
