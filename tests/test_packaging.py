"""The wheel as a user gets it: built from a clean copy of the source, installed with its
dependencies into a fresh virtualenv, and used from a directory outside the checkout.

Why a full install: a venv that borrowed the project's .venv (`--system-site-packages`, a
`.pth` pointing at it, `--no-deps`) would also see whatever is installed there by hand, so a
dependency missing from pyproject.toml, or a module the wheel fails to carry, could still
import. A fresh venv sees only what the wheel declares. It is affordable: pip resolves from
the machine's configured indexes and reuses its cache (about 20 s here).
"""

import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

import agentrt

ROOT = Path(__file__).resolve().parent.parent
# The design card's folders, mapped under `agentrt` (pyproject's package-dir): the wheel
# must carry them only inside `agentrt/`.
MAPPED: dict[str, str] = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
    "package-dir"
]
ROLE_FOLDERS = tuple(folder for name, folder in MAPPED.items() if name != "agentrt")
SCRIPTS = ("agentrt", "agentrt-worker", "agentrt-api")
# Names every release must export; every name in `__all__` is checked regardless.
REQUIRED_EXPORTS = {
    "AgentRuntime",
    "Settings",
    "ToolEffect",
    "ToolContext",
    "Toolbox",
    "tool",
    "build_worker",
    "AgentRuntimeError",
}
# Copying the checkout: no environments, caches, build output or local data.
NOT_SOURCE = shutil.ignore_patterns(
    ".git",
    ".venv*",
    "__pycache__",
    "*.pyc",
    "*.egg-info",
    "build",
    "dist",
    "node_modules",
    ".*_cache",
    ".agentrt",
    ".env",
    "tests",
    "bench",
)

pytestmark = pytest.mark.timeout(300)


@dataclass
class Installed:
    wheel: Path
    python: Path
    bin: Path
    site_packages: Path
    outside: Path  # an empty directory away from the checkout, the cwd of every check
    env: dict[str, str]

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            list(args),
            cwd=self.outside,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )


def _clean_env(**extra: str) -> dict[str, str]:
    """Nothing of this test process's Python or agentrt configuration leaks in."""
    drop = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PIP_NO_COMPILE", "PYTHONSTARTUP")
    env = {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("AGENTRT_")}
    env.update(extra)
    return env


def _check(cmd: list[str], env: dict[str, str], timeout: float) -> None:
    done = subprocess.run(
        cmd, env=env, timeout=timeout, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, f"{' '.join(cmd)} failed:\n{done.stdout}\n{done.stderr}"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    work = tmp_path_factory.mktemp("packaging")
    # A copy, so stale files in a local build/ can never end up in the wheel under test.
    src = work / "src"
    shutil.copytree(ROOT, src, symlinks=True, ignore=NOT_SOURCE)
    dist = work / "dist"
    env = _clean_env()
    _check(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(src)],
        env=env,
        timeout=180,
    )
    (wheel,) = dist.glob("agentrt-*.whl")
    venv = work / "venv"
    # No pip of its own (ensurepip costs seconds): this suite's pip installs into it.
    _check([sys.executable, "-m", "venv", "--without-pip", str(venv)], env=env, timeout=120)
    python = venv / "bin" / "python"
    _check(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", str(wheel)],
        env=env,
        timeout=240,
    )
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    ).stdout.strip()
    outside = work / "outside"
    outside.mkdir()
    run_env = _clean_env(
        PATH=f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        # Any .pyc found later was written by the installer, not by these checks' imports.
        PYTHONDONTWRITEBYTECODE="1",
        # If a --help did reach out, it would fail here rather than find a real service.
        AGENTRT_TEMPORAL_ADDRESS="127.0.0.1:1",
        AGENTRT_DATABASE_URL="postgresql+psycopg://nobody@127.0.0.1:1/none",
    )
    return Installed(wheel, python, venv / "bin", Path(purelib), outside, run_env)


def _record(installed: Installed) -> list[str]:
    (dist_info,) = installed.site_packages.glob("agentrt-*.dist-info")
    rows = (dist_info / "RECORD").read_text().splitlines()
    return [row.rsplit(",", 2)[0] for row in rows if row.strip()]


def test_the_wheel_installs_one_top_level_package(installed: Installed) -> None:
    with zipfile.ZipFile(installed.wheel) as whl:
        in_wheel = {name.split("/", 1)[0] for name in whl.namelist()}
    dist_info = installed.wheel.name.split("-py3")[0] + ".dist-info"
    assert in_wheel == {"agentrt", dist_info}
    # What pip wrote into site-packages (the scripts go to bin/, outside it).
    written = {p.split("/", 1)[0] for p in _record(installed) if not p.startswith("..")}
    assert written == {"agentrt", dist_info}
    present = set(os.listdir(installed.site_packages))
    assert not present & {*ROLE_FOLDERS, "tests", "bench"}
    for folder in ROLE_FOLDERS:  # the folders themselves, real directories, not links
        path = installed.site_packages / "agentrt" / folder
        assert path.is_dir() and not path.is_symlink(), folder
        assert (path / "__init__.py").is_file(), folder
    # The approvals page is package data: served from the wheel, no build step.
    static = installed.site_packages / "agentrt" / "api" / "operator" / "static"
    for page in ("index.html", "page.js", "page.css"):
        assert (static / page).is_file(), page


def test_the_wheel_carries_every_tracked_file_of_the_mapped_folders(installed: Installed) -> None:
    """setup.py finds the packages under each mapped folder: a module or data file it missed
    would import in the checkout and fail in the wheel."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    tracked = subprocess.run(
        ["git", "ls-files", "--", *MAPPED.values()],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    want = set()
    for path in tracked:
        folder, rest = path.split("/", 1)
        want.add("agentrt/" + rest if folder == "agentrt" else f"agentrt/{folder}/{rest}")
    assert len(want) > 100 and "agentrt/api/operator/static/page.js" in want
    with zipfile.ZipFile(installed.wheel) as whl:
        missing = want - set(whl.namelist())
    assert not missing, f"the wheel misses {sorted(missing)[:10]}"


def test_installed_modules_carry_bytecode(installed: Installed) -> None:
    package = installed.site_packages / "agentrt"
    sources = sorted(package.rglob("*.py"))
    assert len(sources) > 50
    tag = sys.implementation.cache_tag
    recorded = set(_record(installed))
    missing = []
    for src in sources:
        pyc = src.parent / "__pycache__" / f"{src.stem}.{tag}.pyc"
        if not pyc.is_file() or pyc.relative_to(installed.site_packages).as_posix() not in recorded:
            missing.append(str(src.relative_to(package)))
    assert not missing, f"no installed bytecode for {missing[:10]}"


IMPORT_ALL = """
import importlib, json, sys, sysconfig
from agentrt import AgentRuntime
import agentrt
values = {name: getattr(agentrt, name) for name in agentrt.__all__}
site = sysconfig.get_paths()["purelib"]
stray = sorted(
    name for name, mod in sys.modules.items()
    if name.split(".")[0] == "agentrt"
    and not (getattr(mod, "__file__", None) or site).startswith(site)
)
print(json.dumps({"all": sorted(agentrt.__all__), "file": agentrt.__file__, "stray": stray,
                  "runtime": AgentRuntime.__module__}))
"""


def test_every_public_name_imports_from_outside_the_checkout(installed: Installed) -> None:
    done = installed.run(str(installed.python), "-c", IMPORT_ALL)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["file"].startswith(str(installed.site_packages))
    assert found["stray"] == []
    assert found["runtime"] == "agentrt.starter.facade"
    # The wheel under test was built from this checkout: same public API.
    assert found["all"] == sorted(agentrt.__all__)
    assert set(found["all"]) >= REQUIRED_EXPORTS
    # Nothing but the top-level package is importable from the role folders' names.
    probe = "import importlib.util as u; print([n for n in %r if u.find_spec(n)])"
    done = installed.run(str(installed.python), "-c", probe % (ROLE_FOLDERS,))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("script", SCRIPTS)
def test_console_scripts_print_usage_and_touch_nothing(installed: Installed, script: str) -> None:
    done = installed.run(str(installed.bin / script), "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: {script}"), done.stdout
    assert "Traceback" not in done.stderr
    assert list(installed.outside.iterdir()) == []  # no ./.agentrt, no database, no key
