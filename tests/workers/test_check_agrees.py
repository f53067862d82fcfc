"""Issue 28: `agentrt-worker --check` runs every check the worker runs at start. Each
misconfiguration below is tried against both, as real processes: the worker refuses to
start and `--check` exits non-zero, with the same one line naming what to fix."""

import subprocess
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from agentrt.core.settings import Settings
from tests._entry import assert_one_line, run_module
from tests.workers._proc import worker_env

GOOD = "{name: p, model: 'scripted:demo', tools: [lookup_order]"
CASES = {
    # name: (files to write: setting -> text, or variables, a fragment of the one line)
    "unknown tool": (
        {"PROFILES": "profiles:\n  - {name: p, model: 'scripted:demo', tools: [no_such_tool]}\n"},
        "profile 'p' names unknown tools: ['no_such_tool']",
    ),
    "unknown toolbox": (
        {"PROFILES": "profiles:\n  - {name: p, model: 'scripted:demo', toolboxes: [nobox]}\n"},
        "profile 'p' names unknown toolboxes: ['nobox']",
    ),
    "unknown provider": (
        {"PROFILES": "profiles:\n  - {name: p, model: 'scriptd:demo'}\n"},
        "no provider 'scriptd' is configured (did you mean 'scripted'?",
    ),
    "unknown fallback provider": (
        {"PROFILES": "profiles:\n  - {name: p, model: 'scripted:a', fallback_model: 'x:b'}\n"},
        "profile 'p' names model 'x:b', but no provider 'x' is configured",
    ),
    "cost budget with no price": (
        {
            "PROFILES": "profiles:\n  - {name: p, model: 'scripted:demo', "
            "budget: {max_cost_usd: 1}}\n"
        },
        "sets budget.max_cost_usd but 'scripted:demo' has no price",
    ),
    "misspelt profile key": (
        {"PROFILES": "profiles:\n  - " + GOOD + ", four_eye: true}\n"},
        "unknown key four_eye (did you mean four_eyes?)",
    ),
    "misspelt providers file key": (
        {"PROVIDERS": "providers:\n  - {name: scripted, price: {}}\n"},
        "unknown key price (did you mean prices?)",
    ),
    "misspelt MCP servers file key": (
        {"MCP_SERVERS": "servers:\n  - {name: s, transport: stdio, command: x, arg: []}\n"},
        "unknown key arg (did you mean args?)",
    ),
    "serving a toolbox it lacks": (
        {"AGENTRT_SERVE": "toolbox:nobox", "AGENTRT_TOOLBOX_QUEUES": "nobox=q"},
        "AGENTRT_SERVE names 'toolbox:nobox', a toolbox this worker lacks",
    ),
    # Approval policies (issue 44, item 3): a set Cedar cannot parse, a profile naming one
    # the file lacks, a set reading an argument its tool lacks.
    "malformed approval policy": (
        {
            "PROFILES": "profiles:\n  - " + GOOD + ", approval_policy: refunds@3}\n",
            "POLICIES": "policies:\n  - {name: refunds, version: 3, "
            "cedar: 'permit(principal, action, resource when {'}\n",
        },
        "approval policy refunds@3: unexpected token `when`",
    ),
    "profile naming an absent approval policy": (
        {
            "PROFILES": "profiles:\n  - " + GOOD + ", approval_policy: refunds@4}\n",
            "POLICIES": "policies:\n  - {name: refunds, version: 3, cedar: ''}\n",
        },
        "profile p: approval policy refunds@4 is not in the policies file",
    ),
    "approval policy reading an argument the tool lacks": (
        {
            "PROFILES": "profiles:\n  - " + GOOD + ", approval: all, approval_policy: tiers@1}\n",
            "POLICIES": "policies:\n  - {name: tiers, version: 1, cedar: 'permit(principal, "
            'action, resource) when { context.args.customer_tier == "gold" };\'}\n',
        },
        "approval policy tiers@1 (profile p, tool lookup_order): error while evaluating",
    ),
    "nothing to poll": ({"AGENTRT_SERVE": "tools"}, "leaves this worker nothing to poll"),
    "misspelt variable": (
        {"AGENTRT_PAYLOAD_KEY": "p1:" + "A" * 44},
        "unknown setting AGENTRT_PAYLOAD_KEY in the environment (did you mean "
        "AGENTRT_PAYLOAD_KEYS?)",
    ),
    "misspelt rules file key": (
        {"RULES": "rules:\n  - {name: r, reply: {txt: hi}}\n"},
        "unknown key txt (did you mean text?)",
    ),
}


def _env(settings: Settings, address: str, tmp_path: Path, files: dict[str, str]) -> dict[str, str]:
    env = worker_env(settings, temporal_address=address, task_queue="check-agrees")
    for setting, text in files.items():
        if setting.startswith("AGENTRT_"):  # a variable, not a file
            env[setting] = text
            continue
        path = tmp_path / f"{setting.lower()}.yaml"
        path.write_text(text)
        env[f"AGENTRT_{setting}_FILE"] = str(path)
    return env


def _run(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_module("agentrt.workers", args, env=env, cwd=cwd)


@pytest.mark.parametrize("case", sorted(CASES))
def test_check_and_start_refuse_the_same_misconfiguration_with_the_same_line(
    temporal_env: WorkflowEnvironment, no_database: Settings, tmp_path: Path, case: str
) -> None:
    files, says = CASES[case]
    address = temporal_env.client.service_client.config.target_host
    env = _env(no_database, address, tmp_path, files)
    checked = _run(env, tmp_path, "--check")
    assert_one_line(checked, "agentrt-worker", says)
    # The real start: it connects to Temporal, then refuses (its progress logs at INFO).
    started = _run(env, tmp_path, "--log-level", "WARNING")
    assert_one_line(started, "agentrt-worker", says)
    assert started.stderr == checked.stderr


def test_check_prints_the_tools_with_their_effects_and_the_providers(
    temporal_env: WorkflowEnvironment, settings: Settings, tmp_path: Path
) -> None:
    address = temporal_env.client.service_client.config.target_host
    files = {"PROFILES": "profiles:\n  - " + GOOD + "}\n"}
    done = _run(_env(settings, address, tmp_path, files), tmp_path, "--check")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    tool = next(line for line in lines if line.startswith("tool lookup_order: "))
    assert "READ_ONLY (declared)" in tool and "approval p: no" in tool
    assert "provider scripted: answer level full, no prices" in lines
