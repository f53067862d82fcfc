"""Every value of contracts/enums.py is used by the package, so a dead one fails here.

"Used" means named as `Enum.MEMBER` (or through an alias such as `R = TerminationReason`)
by a package module other than contracts/enums.py. A table that names every member of an
enum to describe it (api/operator/failures.py's REASONS, say) does not count: it names the
dead ones too. A value no code writes any more but that old rows or recorded histories
still carry is kept, listed in KEPT_FOR_OLD_ROWS with why (the columns are plain strings,
so a row with a removed value would no longer load: `TerminationReason(row.reason)`).

`WRITE_INTERRUPTED` and `TerminationReason.UNKNOWN_PROFILE` were removed (issue 42): no
version of the code ever wrote them (git history), no recorded history in tests/histories
carries them, and no migration constrains the columns to a list of values.
"""

import ast
import enum
import tomllib
from collections.abc import Iterable
from pathlib import Path

from agentrt.contracts import enums

ROOT = Path(__file__).resolve().parent.parent.parent
FOLDERS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
    "package-dir"
].values()
ENUMS: dict[str, type[enum.Enum]] = {
    name: value
    for name, value in vars(enums).items()
    if isinstance(value, type)
    and issubclass(value, enum.Enum)
    and value.__module__ == enums.__name__
}
# "Enum.MEMBER" -> why it stays although nothing writes it any more.
KEPT_FOR_OLD_ROWS: dict[str, str] = {}


def _aliases(tree: ast.AST) -> dict[str, str]:
    """Local name -> enum class name, from imports of contracts.enums and `R = Enum`."""
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("contracts.enums"):
            found |= {a.asname or a.name: a.name for a in node.names if a.name in ENUMS}
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Name):
            if node.value.id in ENUMS:
                found |= {t.id: node.value.id for t in node.targets if isinstance(t, ast.Name)}
    return found


def _member(node: ast.expr, aliases: dict[str, str]) -> tuple[str, str] | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        cls = aliases.get(node.value.id)
        if cls is not None and node.attr in ENUMS[cls].__members__:
            return cls, node.attr
    return None


def _catalogue_keys(tree: ast.AST, aliases: dict[str, str]) -> set[int]:
    """The key nodes of dict displays keyed by every member of one enum (descriptions)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Dict) or not node.keys:
            continue
        keys = [_member(k, aliases) if k is not None else None for k in node.keys]
        classes = {k[0] for k in keys if k is not None}
        if None in keys or len(classes) != 1:
            continue
        if {k[1] for k in keys if k is not None} == set(ENUMS[classes.pop()].__members__):
            out |= {id(k) for k in node.keys}
    return out


def used_members(sources: Iterable[str]) -> set[str]:
    """Every "Enum.MEMBER" the sources name outside a describe-every-member table."""
    used: set[str] = set()
    for source in sources:
        tree = ast.parse(source)
        aliases = _aliases(tree)
        skip = _catalogue_keys(tree, aliases)
        for node in ast.walk(tree):
            if isinstance(node, ast.expr) and id(node) not in skip:
                hit = _member(node, aliases)
                if hit is not None:
                    used.add(".".join(hit))
    return used


def test_every_enum_value_is_used_by_the_package_or_kept_for_old_rows() -> None:
    paths = [p for folder in FOLDERS for p in (ROOT / folder).rglob("*.py")]
    own = ROOT / "contracts" / "enums.py"
    assert own in paths and len(paths) > 50
    used = used_members(p.read_text() for p in paths if p != own)
    every = {f"{name}.{m}" for name, cls in ENUMS.items() for m in cls.__members__}
    assert len(ENUMS) >= 6
    assert set(KEPT_FOR_OLD_ROWS) <= every
    assert not used & set(KEPT_FOR_OLD_ROWS), "a kept value is used again: unlist it"
    assert every - used - set(KEPT_FOR_OLD_ROWS) == set()


def test_the_check_sees_a_value_named_only_in_a_table_of_every_value() -> None:
    probe = (
        "from agentrt.contracts.enums import PendingState as P, ToolEffect\n"
        "WORDS = {P.STAMPED: 'a', P.EXECUTING: 'b', P.OUTCOME_UNKNOWN: 'c'}\n"
        "R = ToolEffect\n"
        "def f(s):\n"
        "    return s is P.STAMPED or R.READ_ONLY\n"
    )
    assert used_members([probe]) == {"PendingState.STAMPED", "ToolEffect.READ_ONLY"}
