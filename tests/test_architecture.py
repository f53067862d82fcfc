"""The architecture page (docs/architecture.md) stays true: each guarantee it names has one
workflow module, one activity module and one tests folder, and every file it names exists."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "architecture.md"
ROW = re.compile(
    r"^\| (?P<name>[^|]+?) \| `(?P<wf>[^`]+)` \| `(?P<act>[^`]+)` \| `(?P<tests>[^`]+)` \|$"
)
GUARANTEES = {"write fence", "settle", "pauses", "A2A journal"}


def _section() -> str:
    assert PAGE.is_file(), "docs/architecture.md is missing"
    return PAGE.read_text()


def _rows() -> list[re.Match[str]]:
    return [m for line in _section().splitlines() if (m := ROW.match(line))]


def test_every_guarantee_has_one_row() -> None:
    named = [m["name"].split(" (")[0] for m in _rows()]
    assert sorted(named) == sorted(GUARANTEES)


def test_each_row_names_one_workflow_module_one_activity_module_and_a_tests_folder() -> None:
    for m in _rows():
        wf, act, tests = m["wf"], m["act"], m["tests"]
        assert wf.startswith("workflows/") and wf.endswith(".py"), m["name"]
        assert act.startswith("activities/") and act.endswith(".py"), m["name"]
        assert tests.startswith("tests/") and tests.endswith("/"), m["name"]
        assert (ROOT / wf).is_file(), wf
        assert (ROOT / act).is_file(), act
        assert (ROOT / tests).is_dir() and any((ROOT / tests).glob("test_*.py")), tests


def test_every_file_the_section_names_exists() -> None:
    """Any `path/to/file.py` or `folder/` in backticks, in the table or the text."""
    paths = set(re.findall(r"`((?:[a-z_0-9]+/)+(?:[a-z_0-9]+\.py)?)`", _section()))
    assert len(paths) >= 15
    missing = [p for p in sorted(paths) if not (ROOT / p).exists()]
    assert not missing, f"the architecture section names missing files: {missing}"
