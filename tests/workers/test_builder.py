"""The sandbox's passthrough is by package: the wire types and every module of the agent
run's workflow package are shared with the sandbox, a new module included."""

import ast
from pathlib import Path

from temporalio.worker.workflow_sandbox import SandboxRestrictions

import agentrt.workflows
from agentrt.workers.builder import WORKFLOW_PASSTHROUGH

MUTATORS = {"append", "extend", "update", "add", "setdefault", "pop", "clear", "insert"}


def test_the_passthrough_is_two_package_prefixes() -> None:
    assert WORKFLOW_PASSTHROUGH == ("agentrt.contracts", "agentrt.workflows")
    restrictions = SandboxRestrictions.default.with_passthrough_modules(*WORKFLOW_PASSTHROUGH)
    # The SDK passes a listed module's submodules through too: no module is listed by name.
    assert {"agentrt.contracts", "agentrt.workflows"} <= restrictions.passthrough_modules


def _module_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def test_no_workflow_module_changes_module_level_state() -> None:
    # Shared between runs, a module's globals must stay what its import made them: no
    # function rebinds one (`global`) or mutates one in place.
    folder = Path(agentrt.workflows.__file__).parent
    offenders = []
    for path in sorted(folder.glob("*.py")):
        tree = ast.parse(path.read_text())
        names = _module_names(tree)
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.Global):
                    offenders.append(f"{path.name}: global {node.names}")
                call = node.func if isinstance(node, ast.Call) else None
                if (
                    isinstance(call, ast.Attribute)
                    and isinstance(call.value, ast.Name)
                    and call.value.id in names
                    and call.attr in MUTATORS
                ):
                    offenders.append(f"{path.name}: {call.value.id}.{call.attr}()")
                if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
                    if isinstance(node.value, ast.Name) and node.value.id in names:
                        offenders.append(f"{path.name}: {node.value.id}[...] =")
    assert len(list(folder.glob("*.py"))) > 10
    assert not offenders, offenders
