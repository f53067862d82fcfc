"""Issue 42 item 3: "a new activity touches N files" (docs/architecture.md) is measured.

For every runtime activity the worker registers, the package files that adding one like it
takes are found from the code itself:

- its frozen name (`contracts/ids.py`), and every package file that names that constant
  (the activity module's `@activity.defn`, the workflow module holding its `ActivityRef`);
- the workflow modules that call it through that `ActivityRef` (`call(REF, ...)`);
- the `contracts/` modules that define its request and result types (the activity's own
  payloads: a type it shares with another activity is no new edit);
- the worker file that registers its activity class (the class's own line: a method on an
  existing class is gathered with the class, `ActivityGroup.activities`).

The page states the most any shipped activity took and the fewest; this test fails when the
claim and the code part ways."""

import inspect
import re
import typing
from collections import Counter
from pathlib import Path

from pydantic import BaseModel

from agentrt.activities._common import ActivityGroup
from agentrt.contracts import ids

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ("activities", "api", "contracts", "core", "starter", "store", "workers", "workflows")
CLAIM = re.compile(r"\*\*Adding a runtime activity\*\* touches (\d+) to (\d+) package files")


def _sources() -> dict[str, str]:
    return {
        str(p.relative_to(ROOT)): p.read_text()
        for folder in PACKAGE
        for p in (ROOT / folder).rglob("*.py")
    }


def _activity_groups() -> list[type[ActivityGroup]]:
    # The two registrations: the run worker's, and the maintenance (retention) worker's.
    import agentrt.workers.compose
    import agentrt.workers.fleet  # noqa: F401

    found: list[type[ActivityGroup]] = []
    pending = list(ActivityGroup.__subclasses__())
    while pending:
        cls = pending.pop()
        found.append(cls)
        pending += cls.__subclasses__()
    return found


def _payloads(fn: typing.Callable[..., object]) -> set[type[BaseModel]]:
    """The activity's request and result types."""
    found: set[type[BaseModel]] = set()
    for hint in typing.get_type_hints(fn).values():
        for t in (hint, *typing.get_args(hint)):
            if isinstance(t, type) and issubclass(t, BaseModel):
                found.add(t)
    return found


def _file_of(t: type) -> str:
    source = inspect.getsourcefile(t)
    assert source is not None
    return str(Path(source).resolve().relative_to(ROOT))


def _defined(group: type) -> list[str]:
    return [
        defn.name
        for m in vars(group).values()
        if (defn := getattr(m, "__temporal_activity_definition", None)) is not None
    ]


def touched_by_each_activity() -> dict[str, set[str]]:
    """Per activity name, the package files adding it took (see the module's docstring)."""
    sources = _sources()
    constants = {v: k for k, v in vars(ids).items() if k.startswith("ACT_") and isinstance(v, str)}
    found: dict[str, tuple[str, type, typing.Callable[..., object]]] = {}
    for group in _activity_groups():
        for _, fn in inspect.getmembers(group, inspect.isfunction):
            defn = getattr(fn, "__temporal_activity_definition", None)
            if defn is not None and defn.name in constants:
                found[defn.name] = (constants[defn.name], group, fn)
    users: Counter[type] = Counter(t for _, _, fn in found.values() for t in _payloads(fn))
    touched: dict[str, set[str]] = {}
    for name, (constant, group, fn) in found.items():
        files = {f for f, text in sources.items() if re.search(rf"\b{constant}\b", text)}
        refs = {
            ref
            for f in files
            for ref in re.findall(
                rf"^(\w+) = ActivityRef\[.*?\]\(\s*{constant}\b", sources[f], re.M
            )
        }
        files |= {
            f for f, text in sources.items()
            if f.startswith("workflows/") and any(re.search(rf"\(\s*{r}\s*,", text) for r in refs)
        }  # fmt: skip
        files |= {_file_of(t) for t in _payloads(fn) if users[t] == 1}  # its own types
        if _defined(group) == [name]:  # a class of its own: registered by name
            files |= {
                f for f, t in sources.items() if f.startswith("workers/") and group.__name__ in t
            }
        touched[name] = files
    return touched


def test_every_registered_runtime_activity_is_measured() -> None:
    touched = touched_by_each_activity()
    shipped = {v for k, v in vars(ids).items() if k.startswith("ACT_") and isinstance(v, str)}
    assert set(touched) == shipped - ids.RETIRED_ACTIVITIES
    for name, files in touched.items():
        assert "contracts/ids.py" in files, name
        assert any(f.startswith("activities/") for f in files), (name, files)
        assert any(f.startswith("workflows/") for f in files), (name, files)


def test_the_readme_claims_what_adding_an_activity_takes() -> None:
    found = CLAIM.search((ROOT / "docs" / "architecture.md").read_text())
    assert found, "docs/architecture.md no longer says what adding a runtime activity touches"
    fewest, most = int(found[1]), int(found[2])
    counts = {name: len(files) for name, files in touched_by_each_activity().items()}
    assert (fewest, most) == (min(counts.values()), max(counts.values())), counts
