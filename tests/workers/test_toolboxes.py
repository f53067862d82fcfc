"""Toolboxes: found in AGENTRT_TOOLBOXES and in a real `agentrt.toolboxes` entry point, named
by profiles, and every misconfiguration one ConfigError at worker start naming the culprit."""

import asyncio
import os
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from agentrt import ConfigError, Settings, Toolbox, ToolContext, ToolEffect, tool
from agentrt.activities.registry import ProfileCatalog, ToolRegistry
from agentrt.activities.retention import RetentionActivities
from agentrt.contracts import ids
from agentrt.contracts.profiles import Profile
from agentrt.core.settings import WorkerSettings
from agentrt.workers.compose import TOOL_THREAD_PREFIX, build
from agentrt.workers.toolboxes import load_toolboxes
from tests.workers import _toolbox_samples as samples

SAMPLES = "tests.workers._toolbox_samples"
CTX = ToolContext("run", "r1.1", "key")


def _with(settings: Settings, **worker: Any) -> Settings:
    return settings.replace(worker=worker)


def test_toolboxes_load_from_the_setting_after_the_entry_points(settings: Settings) -> None:
    boxes = load_toolboxes(_with(settings, toolboxes=f" {SAMPLES}:weather_box ,"))
    assert [b.name for b in boxes] == ["demo", "weather"]  # demo: this package's entry point
    assert boxes[1] is samples.weather_box
    alone = load_toolboxes(
        _with(settings, toolboxes=f"{SAMPLES}:weather_box", toolbox_entry_points=False)
    )
    assert [b.name for b in alone] == ["weather"]


def test_one_toolbox_reached_twice_counts_once(settings: Settings) -> None:
    spec = f"{SAMPLES}:weather_box"
    boxes = load_toolboxes(_with(settings, toolboxes=f"{spec},{spec}"), [samples.weather_box])
    assert [b.name for b in boxes] == ["demo", "weather"]


def _install_dist(root: Path, module: str, body: str, entry: str) -> None:
    """A real installed distribution: a module and a dist-info with an entry_points.txt."""
    (root / f"{module}.py").write_text(textwrap.dedent(body))
    info = root / f"{module}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[agentrt.toolboxes]\n{entry}\n")


def test_a_toolbox_comes_from_an_installed_packages_entry_point(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = """
        from agentrt import Toolbox, ToolEffect, tool

        @tool(effect=ToolEffect.READ_ONLY)
        def greet(name: str) -> str:
            "Greet someone."
            return f"hello {name}"

        box = Toolbox("greetings", [greet])
    """
    _install_dist(tmp_path, "ep_greetings", body, "greetings = ep_greetings:box")
    monkeypatch.syspath_prepend(str(tmp_path))
    boxes = {b.name: b for b in load_toolboxes(settings)}
    assert set(boxes) == {"demo", "greetings"}
    [greet] = boxes["greetings"].tools
    assert greet.spec.name == "greet"
    assert asyncio.run(greet({"name": "ada"}, CTX)) == "hello ada"


@pytest.mark.parametrize(
    ("body", "entry", "message"),
    [
        ("raise ImportError('no such backend')\n", "broken = ep_bad:box",
         r"entry point 'broken' = 'ep_bad:box' of ep_bad \(agentrt.toolboxes\) failed to import:"
         " ImportError: no such backend"),
        ("box = 42\n", "numbers = ep_bad:box",
         r"entry point 'numbers' = 'ep_bad:box' of ep_bad .* is a int, not an agentrt Toolbox"),
    ],
)  # fmt: skip
def test_a_bad_entry_point_is_one_config_error_naming_it(
    settings: Settings,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    body: str,
    entry: str,
    message: str,
) -> None:
    _install_dist(tmp_path, "ep_bad", body, entry)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ConfigError, match=message):
        build(settings)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("tests.workers.no_such_module:box",
         "AGENTRT_TOOLBOXES entry 'tests.workers.no_such_module:box' failed to import:"
         " ModuleNotFoundError"),
        (f"{SAMPLES}:no_such_box", f"'{SAMPLES}:no_such_box' failed to import: AttributeError"),
        (f"{SAMPLES}:not_a_toolbox", "is a list, not an agentrt Toolbox"),
        (SAMPLES, "is not 'package.module:attribute'"),
    ],
)  # fmt: skip
def test_a_bad_toolbox_setting_is_one_config_error_naming_it(
    settings: Settings, spec: str, message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        build(_with(settings, toolboxes=spec))


def test_a_tool_two_toolboxes_define_is_a_config_error_at_start(settings: Settings) -> None:
    with pytest.raises(
        ConfigError,
        match="tool name 'lookup_order' is defined by both toolboxes 'demo' and 'orders2'",
    ):
        build(_with(settings, toolboxes=f"{SAMPLES}:clashing_box"))


def test_two_toolboxes_of_one_name_are_a_config_error(settings: Settings) -> None:
    other = Toolbox("weather", [samples.weather])
    with pytest.raises(ConfigError, match="two toolboxes are named 'weather'"):
        build(_with(settings, toolboxes=f"{SAMPLES}:weather_box"), toolboxes=[other])


def _profiles(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "profiles.yaml"
    path.write_text(textwrap.dedent(body))
    return path


def test_a_profile_naming_an_unknown_tool_or_toolbox_fails_the_start(
    settings: Settings, tmp_path: Path
) -> None:
    unknown_tool = _profiles(
        tmp_path,
        """
        profiles:
          - {name: ok, model: "scripted:demo", tools: [lookup_order]}
          - {name: typo, model: "scripted:demo", tools: [lookup_order, refund_order]}
        """,
    )
    with pytest.raises(
        ConfigError, match=r"profile 'typo' names unknown tools: \['refund_order'\]"
    ):
        build(_with(settings, profiles_file=unknown_tool))
    unknown_box = _profiles(
        tmp_path, 'profiles: [{name: p, model: "scripted:demo", toolboxes: [demo, billing]}]'
    )
    with pytest.raises(
        ConfigError,
        match=r"profile 'p' names unknown toolboxes: \['billing'\] \(loaded: \['demo'\]",
    ):
        build(_with(settings, profiles_file=unknown_box))


def test_a_profile_names_whole_toolboxes_and_tools_from_any_loaded_one() -> None:
    registry = ToolRegistry(
        groups={"weather": [samples.weather], "threads": [samples.which_thread]}
    )
    profile = Profile(
        name="p", model="scripted:x", tools=["which_thread"], toolboxes=["weather", "threads"]
    )
    resolved = ProfileCatalog({"p": profile}, registry).get("p")
    assert resolved is not None and resolved.tools == ["which_thread", "weather"]


def test_the_shipped_profiles_stay_valid_and_resolve_the_demo_toolbox(settings: Settings) -> None:
    shipped = WorkerSettings(_env_file=None).profiles_file
    with build(_with(settings, profiles_file=shipped)) as resources:
        [run_acts] = [
            a.__self__
            for a in resources.activities
            if a.__name__ == "begin"  # type: ignore[attr-defined]
        ]
        support = run_acts._profiles.get("support")
        assert support.tools == ["lookup_order", "set_record", "issue_refund"]


def test_every_activity_is_registered_once(settings: Settings) -> None:
    with build(settings) as resources:
        names = [a.__temporal_activity_definition.name for a in resources.activities]  # type: ignore[attr-defined]
    # The retention pass's activities are the maintenance worker's (workers/fleet.py).
    retention = {v for k, v in vars(ids).items() if k.startswith("ACT_RETENTION_")}
    # A retired name stays reserved in contracts/ids.py; no activity answers to it.
    frozen = {v for k, v in vars(ids).items() if k.startswith("ACT_")} - retention
    frozen -= ids.RETIRED_ACTIVITIES
    assert sorted(names) == sorted(frozen)
    maintenance = RetentionActivities(store=None, executions=None).activities()  # type: ignore[arg-type]
    assert sorted(a.__temporal_activity_definition.name for a in maintenance) == sorted(retention)  # type: ignore[attr-defined]


async def test_sync_tools_run_on_the_workers_pool_sized_by_its_concurrency(
    settings: Settings,
) -> None:
    # More calls at once than asyncio.to_thread's default pool (min(32, cpu + 4)) allows:
    # each waits at a barrier that only opens when all of them run at the same time.
    n = min(32, (os.cpu_count() or 1) + 4) + 4
    barrier = threading.Barrier(n, timeout=20)

    @tool(effect=ToolEffect.READ_ONLY)
    def meet() -> str:
        barrier.wait()
        return threading.current_thread().name

    box = Toolbox("meeting", [meet])
    with build(
        _with(settings, max_concurrent_activities=n, toolboxes=f"{SAMPLES}:threads_box"),
        toolboxes=[box],
    ) as resources:
        assert resources.registry is not None and resources.executor is not None
        assert resources.executor._max_workers == n  # type: ignore[attr-defined]
        bound = resources.registry.get("meet")
        assert bound is not None and bound is not meet  # bound to this worker's pool
        names = await asyncio.gather(*(bound({}, CTX) for _ in range(n)))
        assert all(name.startswith(TOOL_THREAD_PREFIX) for name in names)
        assert len(set(names)) == n  # n threads of the pool, all at once
        pool_idents = {t.ident for t in resources.executor._threads}  # type: ignore[attr-defined]
        from_factory = resources.registry.get("which_thread")
        assert from_factory is not None
        name = await from_factory({}, CTX)
        assert name.startswith(TOOL_THREAD_PREFIX)
        assert len(pool_idents) == n
    assert resources.executor._shutdown  # type: ignore[attr-defined]
