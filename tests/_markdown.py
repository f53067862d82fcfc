"""Every fenced code block of a Markdown file, checked for what it is (issue 40): the README
and every page of the docs site (`markdown_files`). A block's language is the first
word of its info string; `{.python .compile}` (or `python compile`) marks one that is
compiled and name-checked but not run (a worker that runs until stopped, a tool calling a
system of yours).

- `python`: run, as a program with top-level `await`, in a fresh namespace; a block whose
  first line is `# some/module.py` is that file: written where the next blocks import it
  from (`from billing.tools import toolbox`), and imported. Blocks marked `compile` are
  compiled, and every name they use must be bound in the block, imported by it or a
  builtin (so a snippet cannot use a `client` it never made).
- `bash`, `sh`: `bash -n`; every `AGENTRT_*` name is a setting; every `agentrt`,
  `agentrt-api` and `agentrt-worker` command parses with the program's own parser.
- `yaml`: parsed, and validated by the loader of the file it is (profiles, providers, MCP
  servers, scripted rules) when it is one, as the worker would load it.
- `toml`, `json`: parsed.
- a block without a language is prose laid out (the architecture map): not code.
"""

import ast
import builtins
import contextlib
import json
import re
import shlex
import subprocess
import sys
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

_FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_MODULE_FILE = re.compile(r"^#\s*(?P<path>[\w/]+\.py)\s*$")
_SETTING = re.compile(r"\bAGENTRT_[A-Z0-9_]+\b")


@dataclass(frozen=True)
class CodeBlock:
    path: Path
    line: int  # the line of its first line of code, 1-based
    info: str  # the whole info string: "python compile"
    text: str

    @property
    def words(self) -> list[str]:
        """The info string's words: `python compile`, or the attribute form the site's
        renderer (pymdownx.superfences) takes, `{.python .compile}`: a bare second word
        there would make it render the block as text and swallow what follows."""
        info = self.info.strip()
        if info.startswith("{") and info.endswith("}"):
            return [w.removeprefix(".") for w in info[1:-1].split()]
        return info.split()

    @property
    def lang(self) -> str:
        return self.words[0] if self.words else ""

    @property
    def flags(self) -> list[str]:
        return self.words[1:]

    @property
    def module(self) -> str | None:
        """`pkg/mod.py` when the block is that file (its first line says so)."""
        first = self.text.lstrip("\n").splitlines()[0] if self.text.strip() else ""
        m = _MODULE_FILE.match(first)
        return m.group("path") if m else None

    def __str__(self) -> str:
        return f"{self.path.name}:{self.line}[{self.info or 'text'}]"


def code_blocks(path: Path) -> list[CodeBlock]:
    """The fenced blocks of a Markdown file, in order."""
    blocks: list[CodeBlock] = []
    lines = path.read_text().splitlines()
    open_fence: tuple[str, str, int, str] | None = None  # fence, indent, start, info
    for number, line in enumerate(lines, 1):
        m = _FENCE.match(line)
        if open_fence is None:
            if m:
                open_fence = (m["fence"], m["indent"], number, m["info"].strip())
            continue
        fence, indent, start, info = open_fence
        if m and m["fence"].startswith(fence[0]) and len(m["fence"]) >= len(fence):
            if not m["info"].strip():
                body = [x.removeprefix(indent) for x in lines[start : number - 1]]
                blocks.append(CodeBlock(path, start + 1, info, "\n".join(body)))
                open_fence = None
    assert open_fence is None, f"{path}: a code block opened at line {open_fence[2]} never closes"
    return blocks


def markdown_files(root: Path) -> list[Path]:
    """The manual: the README, and every page of the docs site (docs/, mkdocs.yml)."""
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


# --- python --------------------------------------------------------------------------------


def compiled(block: CodeBlock) -> Any:
    return compile(
        block.text, str(block), "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True
    )


class _Names(ast.NodeVisitor):
    """Names a block binds anywhere (assignments, imports, defs, parameters, loop and
    comprehension targets) and names it loads."""

    def __init__(self) -> None:
        self.bound: set[str] = set()
        self.loaded: dict[str, int] = {}

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self.loaded.setdefault(node.id, node.lineno)
        else:
            self.bound.add(node.id)

    def visit_alias(self, node: ast.alias) -> None:
        self.bound.add((node.asname or node.name).split(".")[0])

    def visit_arg(self, node: ast.arg) -> None:
        self.bound.add(node.arg)
        self.generic_visit(node)

    def _def(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.bound.add(node.name)
        self.generic_visit(node)

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _def

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.bound.add(node.name)
        self.generic_visit(node)


def unbound_names(block: CodeBlock) -> list[str]:
    """Names the block loads that nothing binds: `client` in a snippet that never made one."""
    names = _Names()
    names.visit(ast.parse(block.text))
    known = names.bound | set(dir(builtins))
    return sorted(f"{n} (line {block.line + line - 1})" for n, line in names.loaded.items()
                  if n not in known)  # fmt: skip


def write_module(block: CodeBlock, folder: Path) -> Path:
    """A `# pkg/mod.py` block written under `folder` (on sys.path), with its packages."""
    assert block.module is not None
    target = folder / block.module
    target.parent.mkdir(parents=True, exist_ok=True)
    for parent in target.relative_to(folder).parents:
        if str(parent) != ".":
            (folder / parent / "__init__.py").touch()
    target.write_text(block.text)
    return target


async def run_python(block: CodeBlock, namespace: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run the block as a program (top-level await allowed); returns its namespace."""
    scope: dict[str, Any] = {"__name__": "__readme__", **(namespace or {})}
    result = eval(compiled(block), scope)  # the manual's own code
    if result is not None:  # a coroutine when the block awaits at top level
        await result
    return scope


# --- shell ---------------------------------------------------------------------------------

_PROGRAMS = ("agentrt", "agentrt-api", "agentrt-worker")


def shell_commands(text: str) -> Iterator[list[str]]:
    """Each simple command of a shell snippet, as argv (continuations joined, comments
    and `$(...)` substitutions dropped, `;`, `&&`, `|` split)."""
    joined = re.sub(r"\\\n\s*", " ", text)
    for line in joined.splitlines():
        line = re.sub(r"\$\([^)]*\)", "SUBSTITUTED", line)
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True  # `--scope runs:start`, `'billing-*'` stay whole
        try:
            words = list(lexer)
        except ValueError:
            continue
        command: list[str] = []
        for word in [*words, ";"]:
            if word in (";", "&&", "||", "|"):
                if command:
                    yield command
                command = []
            else:
                command.append(word)


def check_shell(
    block: CodeBlock, settings: frozenset[str], parsers: dict[str, Callable[[list[str]], Any]]
) -> list[str]:
    """Problems of a shell block: bad syntax, unknown settings, commands that do not parse."""
    problems = []
    syntax = subprocess.run(
        ["bash", "-n"], input=block.text, capture_output=True, text=True, check=False
    )
    if syntax.returncode != 0:
        problems.append(f"bash -n: {syntax.stderr.strip()}")
    problems += [f"{n} is no setting" for n in sorted(set(_SETTING.findall(block.text)) - settings)]
    for argv in shell_commands(block.text):
        words = [w for w in argv if "=" not in w.split("/")[0] or w.startswith("-")]
        while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
            words = words[1:]
        if not words or Path(words[0]).name not in _PROGRAMS:
            continue
        try:
            parsers[Path(words[0]).name](words[1:])
        except SystemExit as exc:
            problems.append(f"`{shlex.join(argv)}` does not parse ({exc})")
    return problems


# --- data files ----------------------------------------------------------------------------


def parse_data(block: CodeBlock) -> Any:
    if block.lang == "toml":
        return tomllib.loads(block.text)
    if block.lang == "json":
        return json.loads(block.text)
    return yaml.safe_load(block.text)


def yaml_kind(data: Any) -> str | None:
    """Which deployment file a YAML block is: profiles, providers, servers, rules, policies."""
    if isinstance(data, dict):
        for key in ("profiles", "providers", "servers", "rules", "policies"):
            if key in data:
                return key
        if "remote_agents" in data:  # the servers file's other section
            return "servers"
    if isinstance(data, list) and data and isinstance(data[0], dict):
        if "model" in data[0]:
            return "profiles"
        if "match" in data[0] or "reply" in data[0]:
            return "rules"
    return None


def as_file(data: Any, kind: str) -> Any:
    """A bare list of entries (a fragment of a file) as the whole file."""
    return {kind: data} if isinstance(data, list) else data


@contextlib.contextmanager
def python_path(folder: Path) -> Iterator[None]:
    """`folder` importable for the time being; what was imported from it is forgotten."""
    sys.path.insert(0, str(folder))
    try:
        yield
    finally:
        sys.path.remove(str(folder))
        for name, module in list(sys.modules.items()):
            if str(getattr(module, "__file__", "") or "").startswith(str(folder)):
                del sys.modules[name]
