"""The determinism guard rails fire on purpose-made violations (a check that cannot fail
is no check)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def test_ruff_bans_nondeterministic_calls_in_workflows() -> None:
    probe = ROOT / "workflows" / "_probe_violation.py"
    probe.write_text(
        "import random\nimport uuid\nfrom datetime import datetime\n\n\n"
        "def f() -> object:\n    return (datetime.now(), uuid.uuid4(), random.random())\n"
    )
    try:
        out = subprocess.run(
            [str(BIN / "ruff"), "check", str(probe)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
    finally:
        probe.unlink()
    assert out.returncode != 0
    for banned in ("datetime.datetime.now", "uuid.uuid4", "random"):
        assert f"`{banned}` is banned" in out.stdout, out.stdout


def test_import_linter_catches_an_indirect_io_import(tmp_path: Path) -> None:
    work = tmp_path / "tree"
    shutil.copytree(
        ROOT,
        work,
        symlinks=True,
        ignore=shutil.ignore_patterns(
            ".venv", ".git", "__pycache__", "*.db", ".agentrt", "node_modules", "build"
        ),
    )
    # workflows -> activities._shield -> (new) store import: forbidden, even indirectly.
    target = work / "activities" / "_shield.py"
    target.write_text("import agentrt.store.runs.record  # noqa\n" + target.read_text())
    # As `./dev lint` runs it: from the copy's package view (links to its root folders).
    subprocess.run(["bash", str(work / "dev"), "typed-view"], check=True)
    view = work / "build" / "typed"
    out = subprocess.run(
        [str(BIN / "lint-imports"), str(work / "pyproject.toml")],
        cwd=view,
        capture_output=True,
        text=True,
        check=False,
        env={"PYTHONPATH": str(view), "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"},
    )
    assert out.returncode != 0
    assert "Workflow code reaches no I/O library" in out.stdout
    assert "BROKEN" in out.stdout
