"""examples/custom-image/Dockerfile, followed without Docker (it does not run here): it
starts FROM the image docker-compose.yml builds, installs a toolbox package, copies the
files the worker reads to where its ENV lines point, and those ENV names are the worker's
own settings. Then the image is emulated: the toolbox installed as the RUN line does (the
example plug-in's environment), the COPY files laid out under a scratch root, the ENV
re-rooted there, and `agentrt-worker --list-tools` must load the toolbox, the MCP server
and the profiles."""

import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml

from agentrt.core.settings import ProviderSettings, Settings, WorkerSettings, env_name
from tests.examples.test_example_toolbox import ExampleEnv, example_env  # noqa: F401
from tests.workers._proc import worker_env

ROOT = Path(__file__).resolve().parent.parent
DOCKERFILE = ROOT / "examples" / "custom-image" / "Dockerfile"
CONTEXT = ROOT / "examples"  # the build context docs/guides/deployment.md's `docker build` names
# The settings an image of ours is configured by: the files the worker reads.
FILE_SETTINGS = {
    env_name(WorkerSettings, "profiles_file"): ("worker", "profiles_file"),
    env_name(ProviderSettings, "rules_file"): ("providers", "rules_file"),
    env_name(WorkerSettings, "mcp_servers_file"): ("worker", "mcp_servers_file"),
}


def instructions(path: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order, continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n", " ", path.read_text())
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), " ".join(rest.split())))
    return out


def env_lines(steps: list[tuple[str, str]]) -> dict[str, str]:
    env: dict[str, str] = {}
    for word, rest in steps:
        if word == "ENV":
            env.update(pair.split("=", 1) for pair in rest.split())
    return env


def copies(steps: list[tuple[str, str]]) -> dict[str, str]:
    """COPY destination -> source (relative to the build context)."""
    return {rest.split()[-1]: rest.split()[0] for word, rest in steps if word == "COPY"}


def our_image() -> str:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    (built,) = [s["image"] for s in compose["services"].values() if "build" in s]
    return str(built)


def test_it_starts_from_our_image_and_ends_as_our_user() -> None:
    steps = instructions(DOCKERFILE)
    assert steps[0] == ("FROM", our_image())
    users = [rest for word, rest in steps if word == "USER"]
    ours = re.findall(r"^USER (\S+)$", (ROOT / "Dockerfile").read_text(), re.M)
    assert users[-1] == ours[-1], "the image must not end as root"


def test_env_names_are_the_workers_settings_and_point_at_copied_files(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    steps = instructions(DOCKERFILE)
    env, copied = env_lines(steps), copies(steps)
    assert set(env) == set(FILE_SETTINGS)
    for name, value in env.items():
        assert value in copied, f"{name}={value}: nothing is copied there"
        assert (CONTEXT / copied[value]).is_file(), f"{copied[value]} is not in the context"
    # What the worker reads: Settings built from these variables has them in its fields.
    for name in [k for k in os.environ if k.startswith("AGENTRT_")]:
        monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    settings = Settings()
    for name, (group, field) in FILE_SETTINGS.items():
        assert str(getattr(getattr(settings, group), field)) == env[name]


def test_the_installed_directory_is_a_toolbox_package() -> None:
    steps = instructions(DOCKERFILE)
    (install,) = [rest for word, rest in steps if word == "RUN" and "pip install" in rest]
    target = next(a for a in install.split("&&")[0].split() if a.startswith("/"))
    source = CONTEXT / copies(steps)[target.rstrip("/") + "/"]
    project = tomllib.loads((source / "pyproject.toml").read_text())["project"]
    assert project["entry-points"]["agentrt.toolboxes"], "the worker finds toolboxes by these"
    assert "--no-deps" in install  # agentrt is the base image's, never re-resolved
    assert (ROOT / "examples" / "agentrt-example-toolbox") == source.resolve()


@pytest.mark.timeout(120)
def test_the_emulated_image_loads_the_toolbox_the_mcp_server_and_the_profiles(
    example_env: ExampleEnv,  # noqa: F811 (the installed toolbox: the RUN line)
    settings: Settings,
    tmp_path: Path,
) -> None:
    steps = instructions(DOCKERFILE)
    image = tmp_path / "image"
    for dest, source in copies(steps).items():
        if not dest.endswith("/"):
            target = image / dest.lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(CONTEXT / source, target)
    env = worker_env(settings, temporal_address="127.0.0.1:9", task_queue="unused")
    env["AGENTRT_DATABASE_URL"] = "postgresql+psycopg://nobody@127.0.0.1:9/none"
    env.update({k: str(image / v.lstrip("/")) for k, v in env_lines(steps).items()})
    env["PATH"] = f"{example_env.python.parent}{os.pathsep}{env.get('PATH', '')}"
    proc = subprocess.run(
        [str(example_env.python), "-m", "agentrt.workers", "--list-tools"], env=env,
        cwd=tmp_path, capture_output=True, text=True, timeout=90,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    tools = {line.split()[0] for line in proc.stdout.splitlines()[1:] if line.strip()}
    # The Python toolbox (entry point), the MCP server's tools, for the example's profiles.
    assert {"lookup_stock", "place_order", "warehouse.book_shipment"} <= tools
    assert "shop:" in proc.stdout
