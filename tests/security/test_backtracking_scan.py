"""Issue 41, M1/M2: nothing user-controlled reaches a backtracking engine.

The scan reads every module of the package (the folders the wheel installs as `agentrt`)
and lists each one that reaches Python's backtracking regex engine: `re` or `regex`
imported, `fnmatch` (which compiles to `re`), or `jsonschema` (whose `pattern` keywords
run `re`). Each must be on the allowlist below with why its use is safe; a new module on
the list fails this test until someone says why, and an entry whose module no longer uses
`re` fails it too (the list stays the truth). Patterns over user or model text belong on
RE2 (`agentrt.contracts.linear.linear`)."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ("activities", "agentrt", "api", "contracts", "core", "starter", "store", "workers",
           "workflows")  # fmt: skip
BACKTRACKING = {"re": "re", "regex": "regex", "fnmatch": "fnmatch", "jsonschema": "jsonschema"}

# module -> (what it imports, why that is safe). Keep each reason about the text it reads.
ALLOWED: dict[str, tuple[str, str]] = {
    "contracts/output.py": (
        "jsonschema",
        "schema checks only (check_schema, with no format checker); answers are validated "
        "by contracts/schema_keywords.py's validator, whose pattern keywords are RE2",
    ),
    "contracts/schema_keywords.py": (
        "jsonschema",
        "extends Draft 2020-12 with RE2 `pattern`/`patternProperties` and a linear "
        "`uniqueItems`; no format checker; tests/security/test_typed_answer_limits.py",
    ),
    "api/grants.py": (
        "fnmatch",
        "grant globs (written by an operator) over the names of profiles the workers "
        "registered (configuration): no client text on either side",
    ),
    "activities/providers/_templates.py": (
        "re",
        "parses the rules file's reply templates (configuration); over captured text only "
        "`[+-]?[0-9]+` with fullmatch: one character class, linear",
    ),
    "activities/providers/scripted.py": (
        "re",
        "`\\S+\\s*|\\s+` splits the scripted reply into words for streaming: each "
        "alternative is a run of one class, so each match ends where the run does: linear",
    ),
    "activities/providers/_wire_names.py": (
        "re",
        "tool names and call ids (ours or the profile's) against one anchored character "
        "class of at most 64; a substitution of one class: linear",
    ),
    "activities/toolbox/box.py": ("re", "toolbox names from configuration and code, anchored"),
    "activities/toolbox/decorator.py": ("re", "tool names from the code that declares them"),
    "workers/providers_file.py": ("re", "factory references in the providers file (configuration)"),
    "core/temporal.py": (
        "re",
        '`(?:message|error): "([^"]+)"` over the Temporal client\'s own connection error '
        "text: a literal prefix then one negated class, linear",
    ),
}


def _modules() -> list[Path]:
    return sorted(p for folder in PACKAGE for p in (ROOT / folder).rglob("*.py"))


def _reaches(path: Path) -> set[str]:
    """The backtracking modules `path` imports (at any depth of its code)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        found |= {BACKTRACKING[n.split(".")[0]] for n in names if n.split(".")[0] in BACKTRACKING}
    return found


def test_every_module_that_reaches_a_backtracking_engine_is_allowed_and_says_why() -> None:
    found = {str(p.relative_to(ROOT)): reached for p in _modules() if (reached := _reaches(p))}
    assert len(found) > 5, "the scan found almost nothing: is it reading the package?"
    unexplained = {m: sorted(r) for m, r in found.items() if m not in ALLOWED}
    assert not unexplained, (
        f"{unexplained}: run patterns over user or model text on RE2 "
        "(agentrt.contracts.linear.linear), or add the module to ALLOWED saying why it is safe"
    )
    for module, reached in found.items():
        what, why = ALLOWED[module]
        assert reached == {what}, f"{module} reaches {sorted(reached)}, allowed {what}"
        assert len(why) > 20
    stale = sorted(set(ALLOWED) - set(found))
    assert not stale, f"no longer reaching a backtracking engine: {stale}: drop them"


@pytest.mark.parametrize(
    "source",
    [
        "import re\n",
        "from re import compile\n",
        "import regex as r\n",
        "from fnmatch import fnmatchcase\n",
        "def f():\n    import jsonschema.validators\n",
    ],
)
def test_the_scan_sees_each_way_in(tmp_path: Path, source: str) -> None:
    path = tmp_path / "m.py"
    path.write_text(source)
    assert _reaches(path), source
    path.write_text("import re2\nfrom agentrt.contracts.linear import linear\n")
    assert not _reaches(path)
