"""Issue 28: every setting is documented, and the documentation is made from the settings
classes (core/settings_doc.py), so the two cannot drift: the Settings page's table
(docs/reference/settings.md) is
compared here with the table made from the classes, and each console script's `--help`
lists its options.

After changing a setting, rewrite the page's table: `python -m tests.core.test_settings_doc`."""

import contextlib
import io
import re
import tomllib
from collections.abc import Callable
from importlib import import_module
from pathlib import Path

import pytest
from pydantic_settings import BaseSettings

from agentrt.api.settings import ApiSettings
from agentrt.core.settings_api import RemoteSettings
from agentrt.core.settings_doc import rows, table

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "reference" / "settings.md"
HEAD = "| setting | variable | default | meaning |\n"


def groups() -> list[tuple[str, type[BaseSettings]]]:
    """Every settings group of every process: the worker's and CLI's, the API's, the
    remote CLI's."""
    return [*ApiSettings.groups(), ("remote", RemoteSettings)]


def _page_table(text: str) -> tuple[int, int]:
    start = text.index(HEAD)
    end = text.index("\n\n", start) + 1
    return start, end


def test_the_settings_page_table_is_the_one_made_from_the_settings_classes() -> None:
    text = PAGE.read_text()
    start, end = _page_table(text)
    assert text[start:end] == table(groups()), (
        "docs/reference/settings.md's table differs from the settings classes: "
        "run `python -m tests.core.test_settings_doc`"
    )


def test_every_setting_has_a_meaning() -> None:
    listed = rows(groups())
    assert len(listed) > 70
    assert [s for s, _, _, meaning in listed if not meaning] == []


def _console_scripts() -> dict[str, Callable[[list[str]], None]]:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    out = {}
    for name, target in pyproject["project"]["scripts"].items():
        module, _, attr = target.partition(":")
        out[name] = getattr(import_module(module), attr)
    return out


def _help(main: Callable[[list[str]], None], args: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as done:
        main([*args, "--help"])
    assert done.value.code == 0
    return out.getvalue()


def _bare(text: str) -> list[str]:
    """The options and positionals `--help` lists without saying what they are."""
    lines, section, bare = text.splitlines(), "", []
    for i, line in enumerate(lines):
        if line and not line.startswith(" ") and line.endswith(":"):
            section = line
            continue
        entry = re.match(r"^  ([^ {].*?)(?: {2,}(\S.*))?$", line)
        if section not in ("options:", "positional arguments:") or entry is None:
            continue
        follows = lines[i + 1] if i + 1 < len(lines) else ""
        if entry.group(2) is None and not re.match(r"^ {4,}\S", follows):
            bare.append(entry.group(1))
    return bare


def _commands(text: str) -> list[str]:
    """The subcommands `--help` lists: the 4-space entries under its positional arguments."""
    section = text.partition("\npositional arguments:\n")[2].partition("\n\n")[0]
    return re.findall(r"^    ([a-z][a-z0-9-]*)(?: |$)", section, re.M)


@pytest.mark.parametrize("script", sorted(_console_scripts()))
def test_every_console_script_and_command_lists_its_options(script: str) -> None:
    main = _console_scripts()[script]
    pending, seen = [[]], 0
    while pending:
        args = pending.pop()
        text = _help(main, args)
        seen += 1
        assert text.startswith(f"usage: {script}"), text
        assert "options:\n  -h, --help" in text, text
        assert _bare(text) == [], f"{script} {' '.join(args)}: no help for {_bare(text)}"
        pending += [[*args, command] for command in _commands(text)]
    assert seen >= 1


def test_the_settings_each_process_reads_are_in_its_help() -> None:
    scripts = _console_scripts()
    serve = _help(scripts["agentrt-api"], ["serve"])
    for var in ("AGENTRT_API_HOST", "AGENTRT_API_PORT", "AGENTRT_API_PUBLIC_URL"):
        assert var in serve
    assert "the address `agentrt-api` binds".replace("`", "") in serve
    worker = _help(scripts["agentrt-worker"], [])
    for var in ("AGENTRT_MCP_SERVERS_FILE", "AGENTRT_PROVIDERS_FILE", "AGENTRT_SEAL_KEYS"):
        assert var in worker


if __name__ == "__main__":  # rewrite the page's table from the settings classes
    text = PAGE.read_text()
    start, end = _page_table(text)
    PAGE.write_text(text[:start] + table(groups()) + text[end:])
