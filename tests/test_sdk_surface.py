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


# Private attributes read on objects: each of these is the package's own (a copy of its own
# object rebound, a handler it built) or a documented standard name (`os._exit`, a
# NamedTuple's `_replace`). Anything else is a library's private state, which an upgrade may
# change without notice (a session once read the SDK's `_workflow_handle` future).
OWN_OR_DOCUMENTED = {
    "bound._executor",
    "bound._reconciled",
    "bound._run",
    "handler._tasks",
    "profile._held",
    "runtime._engine",
    "os._exit",
    "_replace",
}


def _private_reads(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _is_private(node.attr):
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                continue
            text = ast.unparse(node)
            if text not in OWN_OR_DOCUMENTED and node.attr not in OWN_OR_DOCUMENTED:
                found.append(text)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            named = node.args[1] if node.func.id.endswith("attr") and len(node.args) > 1 else None
            if isinstance(named, ast.Constant) and isinstance(named.value, str):
                if _is_private(named.value):
                    found.append(ast.unparse(node))
    return found


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def test_no_private_attribute_of_a_library_object_is_read() -> None:
    sources = [p for folder in FOLDERS for p in (ROOT / folder).rglob("*.py")]
    offenders = [
        f"{path.relative_to(ROOT)}: {text}"
        for path in sources
        if "versions" not in path.parts
        for text in _private_reads(ast.parse(path.read_text(), str(path)))
    ]
    assert not offenders, offenders


def test_the_check_sees_a_private_attribute_read() -> None:
    probe = "getattr(start, '_workflow_handle', None)\nfuture = op._workflow_handle\nself._ok\n"
    assert _private_reads(ast.parse(probe)) == [
        "getattr(start, '_workflow_handle', None)",
        "op._workflow_handle",
    ]
