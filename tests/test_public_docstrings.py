"""The public API is documented: every name of `agentrt.__all__` and each of its public
methods has a docstring, and ruff's docstring rules (pydocstyle, Google convention) cover
every module that defines one, so a new public name without a docstring fails the lint."""

import inspect
import re
import tomllib
from pathlib import Path

import agentrt

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def _module_file(module: str) -> str:
    """agentrt.contracts.enums -> contracts/enums.py, by pyproject's package-dir."""
    folders = PYPROJECT["tool"]["setuptools"]["package-dir"]
    package = max((p for p in folders if module.startswith(p + ".")), key=len)
    return f"{folders[package]}/{module[len(package) + 1 :].replace('.', '/')}.py"


def _docstring_checked() -> set[str]:
    """The files ruff's D rules apply to: those the negated per-file-ignore leaves out."""
    ignores = PYPROJECT["tool"]["ruff"]["lint"]["per-file-ignores"]
    (pattern,) = [p for p, rules in ignores.items() if p.startswith("!") and rules == ["D"]]
    found = re.fullmatch(r"!\{(.+)\}", pattern)
    assert found is not None, pattern
    return set(found.group(1).split(","))


def test_ruff_checks_the_docstrings_of_every_module_of_the_public_api() -> None:
    assert "D" in PYPROJECT["tool"]["ruff"]["lint"]["select"]
    modules = set(agentrt._EXPORTS.values())
    wanted = {"agentrt/__init__.py"} | {_module_file(m) for m in modules}
    assert all((ROOT / f).is_file() for f in wanted), wanted
    assert wanted <= _docstring_checked(), sorted(wanted - _docstring_checked())


def _public_members(cls: type) -> dict[str, object]:
    """Public methods and properties the class or an agentrt base of it defines."""
    out: dict[str, object] = {}
    for base in reversed(cls.__mro__):
        if base.__module__.startswith("agentrt."):
            for name, value in vars(base).items():
                if not name.startswith("_") or name == "__call__":
                    if callable(value) or isinstance(value, property | classmethod):
                        out[name] = getattr(cls, name)
    return out


def test_every_public_name_and_its_public_methods_have_a_docstring() -> None:
    missing = []
    for name in agentrt.__all__:
        value = getattr(agentrt, name)
        if not (vars(value).get("__doc__") if isinstance(value, type) else value.__doc__):
            missing.append(name)
        if isinstance(value, type) and not issubclass(value, BaseException):
            for member, attr in _public_members(value).items():
                doc = inspect.getdoc(attr.fget if isinstance(attr, property) else attr)
                if not doc:
                    missing.append(f"{name}.{member}")
    assert missing == []
