"""agentrt uses the Temporal SDK through its public names only: no private module (a path
part with a leading underscore, or the native bridge), and no private name imported."""

import ast
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
    "package-dir"
].values()


def _private(module: str) -> bool:
    parts = module.split(".")
    return parts[0] == "temporalio" and (
        any(p.startswith("_") for p in parts) or parts[:2] == ["temporalio", "bridge"]
    )


def _sdk_imports(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
    return [name for name in found if name.startswith("temporalio")]


def test_no_private_sdk_module_or_name_is_imported() -> None:
    sources = [p for folder in FOLDERS for p in (ROOT / folder).rglob("*.py")]
    assert len(sources) > 50
    offenders = {
        f"{path.relative_to(ROOT)}: {name}"
        for path in sources
        for name in _sdk_imports(ast.parse(path.read_text(), str(path)))
        if _private(name)
    }
    assert not offenders, sorted(offenders)


def test_the_check_sees_a_private_import() -> None:
    probe = "from temporalio.workflow import _Definition\nimport temporalio.bridge.proto\n"
    assert [n for n in _sdk_imports(ast.parse(probe)) if _private(n)] == [
        "temporalio.workflow._Definition",
        "temporalio.bridge.proto",
    ]
