"""Find the worker's toolboxes: `AGENTRT_TOOLBOXES`, the `agentrt.toolboxes` entry points
and the builder's own list. Each failure is one ConfigError naming the culprit."""

import importlib
from collections.abc import Iterable, Sequence
from importlib.metadata import EntryPoint, entry_points

from agentrt.activities.toolbox.box import Toolbox
from agentrt.contracts.errors import ConfigError
from agentrt.core.settings import Settings

ENTRY_POINT_GROUP = "agentrt.toolboxes"


def load_toolboxes(settings: Settings, extra: Iterable[Toolbox] = ()) -> list[Toolbox]:
    """Entry points first, then AGENTRT_TOOLBOXES, then `extra`. One object reached twice
    (an entry point also named in the setting) counts once; two toolboxes of one name clash."""
    found: list[tuple[str, Toolbox]] = []
    if settings.worker.toolbox_entry_points:
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            origin = _entry_point_origin(ep)
            found.append((origin, _checked(_load_entry_point(ep), origin)))
    for spec in _specs(settings.worker.toolboxes):
        origin = f"AGENTRT_TOOLBOXES entry {spec!r}"
        found.append((origin, _checked(import_spec(spec), origin)))
    for box in extra:
        origin = "the worker builder's toolboxes"
        found.append((origin, _checked(box, f"{box!r} in {origin}")))
    return _unique(found)


def import_spec(spec: str) -> object:
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ConfigError(f"AGENTRT_TOOLBOXES entry {spec!r} is not 'package.module:attribute'")
    try:
        value: object = importlib.import_module(module_name)
        for part in attr.split("."):
            value = getattr(value, part)
    except Exception as exc:
        raise ConfigError(
            f"AGENTRT_TOOLBOXES entry {spec!r} failed to import: {type(exc).__name__}: {exc}"
        ) from exc
    return value


def _specs(raw: str) -> list[str]:
    return [s.strip() for s in raw.split(",") if s.strip()]


def _load_entry_point(ep: EntryPoint) -> object:
    try:
        loaded: object = ep.load()
    except Exception as exc:
        raise ConfigError(
            f"{_entry_point_origin(ep)} failed to import: {type(exc).__name__}: {exc}"
        ) from exc
    return loaded


def _entry_point_origin(ep: EntryPoint) -> str:
    dist = f" of {ep.dist.name}" if ep.dist is not None else ""
    return f"entry point {ep.name!r} = {ep.value!r}{dist} ({ENTRY_POINT_GROUP})"


def _checked(value: object, where: str) -> Toolbox:
    if not isinstance(value, Toolbox):
        raise ConfigError(f"{where} is a {type(value).__name__}, not an agentrt Toolbox")
    return value


def _unique(found: Sequence[tuple[str, Toolbox]]) -> list[Toolbox]:
    by_name: dict[str, tuple[str, Toolbox]] = {}
    for origin, box in found:
        seen = by_name.get(box.name)
        if seen is None:
            by_name[box.name] = (origin, box)
        elif seen[1] is not box:
            raise ConfigError(f"two toolboxes are named {box.name!r}: {seen[0]} and {origin}")
    return [box for _, box in by_name.values()]
