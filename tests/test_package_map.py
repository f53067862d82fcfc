"""The design card's root folders ARE the `agentrt` package: pyproject.toml maps each to its
name under `agentrt` (setuptools package-dir), with no link in the tree. The wheel side is
proven in test_packaging.py; here, the checkout: what git tracks, what the editable install
imports, and the view mypy and lint-imports read.
"""

import importlib
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

import agentrt

ROOT = Path(__file__).resolve().parent.parent
MAPPED: dict[str, str] = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
    "package-dir"
]


def test_git_tracks_no_symlink() -> None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    listed = subprocess.run(
        ["git", "ls-files", "-s"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert len(listed) > 100  # the listing is the tree's, not an empty answer
    links = [line.split("\t", 1)[1] for line in listed if line.startswith("120000 ")]
    assert links == []


def test_every_root_folder_is_mapped_and_is_a_real_folder() -> None:
    assert MAPPED["agentrt"] == "agentrt"
    for name, folder in MAPPED.items():
        assert name == "agentrt" or name == f"agentrt.{folder}"
        path = ROOT / folder
        assert path.is_dir() and not path.is_symlink(), folder
        assert (path / "__init__.py").is_file(), folder
    # Nothing left inside agentrt/ but the public API, and `run_agent` (workflow code of
    # the user's: not in workflows/, whose workflows start no children).
    assert sorted(p.name for p in (ROOT / "agentrt").iterdir() if p.name != "__pycache__") == [
        "__init__.py",
        "child.py",
        "py.typed",
    ]


def test_the_editable_install_imports_the_root_folders_files() -> None:
    assert Path(agentrt.__file__) == ROOT / "agentrt" / "__init__.py"
    for name, folder in MAPPED.items():
        module = importlib.import_module(name)
        assert module.__file__ == str(ROOT / folder / "__init__.py"), name
    # Deeper modules and the namespace package that carries the approvals page, too.
    builder = importlib.import_module("agentrt.workers.builder")
    assert builder.__file__ == str(ROOT / "workers" / "builder.py")
    static = importlib.import_module("agentrt.api.operator.static")
    assert list(static.__path__) == [str(ROOT / "api" / "operator" / "static")]


def test_the_typed_view_shows_the_same_files() -> None:
    """mypy and lint-imports cannot follow the editable install's import hook; `./dev`
    gives them build/typed/agentrt. Every mapped folder resolves to the root folder."""
    view = ROOT / "build" / "typed" / "agentrt"
    if not view.is_dir():
        subprocess.run(["bash", str(ROOT / "dev"), "typed-view"], check=True)
    for own in (ROOT / "agentrt").glob("*.py"):  # agentrt/child.py too: mypy and the docs
        assert (view / own.name).resolve() == own, own.name
    for name, folder in MAPPED.items():
        if name != "agentrt":
            assert (view / name.removeprefix("agentrt.")).resolve() == ROOT / folder, name


# What store/__init__.py says each part of the store owns; a module goes in the part whose
# rows or job it owns, never flat beside them (the import contract orders the parts).
STORE_PARTS = {"a2a", "db", "live", "migrations", "ops", "runs", "security", "steps"}


def test_the_store_is_grouped_by_what_each_part_owns() -> None:
    store = ROOT / "store"
    folders = {p.name for p in store.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders == STORE_PARTS
    flat = sorted(p.name for p in store.glob("*.py"))
    assert flat == ["__init__.py", "demo.py"]
    documented = (store / "__init__.py").read_text()
    for part in STORE_PARTS - {"migrations"}:
        assert f"`{part}`" in documented, part
        assert (store / part / "__init__.py").read_text().startswith('"""'), part


def test_the_migrations_are_where_alembic_and_the_store_look() -> None:
    """alembic.ini (the CLI) and store.db.migrate (every process) name one folder."""
    from alembic.script import ScriptDirectory

    from agentrt.store.db import migrate

    ini = (ROOT / "alembic.ini").read_text()
    assert "\nscript_location = store/migrations\n" in ini
    scripts = ScriptDirectory.from_config(migrate._config())
    assert Path(scripts.dir) == ROOT / "store" / "migrations"
    assert migrate.head() == ScriptDirectory(str(ROOT / "store" / "migrations")).get_current_head()
