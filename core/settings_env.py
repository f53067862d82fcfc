"""Every `AGENTRT_*` variable a process is given must be one agentrt reads: a misspelt one
(`AGENTRT_PAYLOAD_KEY` for `AGENTRT_PAYLOAD_KEYS`) would otherwise be ignored, and the
control it meant to set (here: Temporal payload encryption) silently left off. The worker,
`agentrt-api` and the `agentrt` CLI call `refuse_unknown` first, on the environment and the
`.env` file pydantic-settings reads; an unknown name stops the process with one line naming
it and the closest valid name.

The names known are those of every settings group of every process (a worker and the API
often share one ConfigMap or `.env`, so each knows the other's), the development tools'
own, and the variables a configured providers or MCP servers file reads its secrets from
(`api_key_env`, `headers_from_env`, `env_from_env`)."""

import difflib
import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml
from dotenv import dotenv_values
from pydantic_settings import BaseSettings

from agentrt.contracts.errors import ConfigError
from agentrt.core.settings import Settings
from agentrt.core.settings_api import ApiServerSettings, PushSettings, RemoteSettings
from agentrt.core.settings_doc import variable

PREFIX = "AGENTRT_"
# Read by `./dev`, the test suite and the benchmarks, never by a process of the package: a
# developer's shell may hold them while it runs the CLI.
DEVELOPMENT_VARIABLES = frozenset(
    {
        "AGENTRT_VENV",
        "AGENTRT_TEST_DATABASE",
        "AGENTRT_TEST_DATABASE_ONLY",
        "AGENTRT_UPDATE_SCREENSHOTS",
        "AGENTRT_RECORD_HISTORIES",
        "AGENTRT_BENCH_SMOKE",
    }
)
# The keys under which a providers or MCP servers file names an environment variable.
_REFERENCE_KEYS = ("_env", "from_env")


def _groups() -> Iterator[type[BaseSettings]]:
    for _, group in Settings.groups():
        yield group
    yield from (ApiServerSettings, PushSettings, RemoteSettings)


def setting_variables() -> frozenset[str]:
    """The variable of every setting of every process."""
    return frozenset(variable(g, f) for g in _groups() for f in g.model_fields)


def _references(node: Any, under_reference: bool = False) -> Iterator[str]:
    if isinstance(node, Mapping):
        for key, value in node.items():
            # Under a reference key, a mapping's values are names too (`{Header: NAME}`).
            named = under_reference or (isinstance(key, str) and key.endswith(_REFERENCE_KEYS))
            yield from _references(value, named)
    elif isinstance(node, list):
        for item in node:
            yield from _references(item)
    elif under_reference and isinstance(node, str):
        yield node.upper()


def file_references(paths: Iterable[Path | None]) -> frozenset[str]:
    """The variables the given providers / MCP servers files read secrets from. A file that
    cannot be read names none here: its own loader reports it, with its own words."""
    names: set[str] = set()
    for path in paths:
        if path is None:
            continue
        try:
            text = path.read_text()
            data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
        except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError, RecursionError):
            continue
        names.update(_references(data))
    return frozenset(names)


def given_variables(environ: Mapping[str, str], dotenv: Path | None) -> dict[str, str]:
    """The `AGENTRT_*` names set, upper-cased (pydantic-settings reads them case-blind), each
    with where it was set."""
    found = {k.upper(): "the environment" for k in environ if k.upper().startswith(PREFIX)}
    if dotenv is not None and dotenv.is_file():
        for key in dotenv_values(dotenv):
            if key.upper().startswith(PREFIX):
                found.setdefault(key.upper(), str(dotenv))
    return found


def unknown_message(name: str, where: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.75)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return (
        f"unknown setting {name} in {where}{hint}: agentrt reads no such variable; fix or remove it"
    )


def refuse_unknown(
    environ: Mapping[str, str], dotenv: Path | None = Path(".env"), settings: Settings | None = None
) -> None:
    """ConfigError naming the first unknown `AGENTRT_*` variable (sorted, so the message is
    stable), with the closest valid name. `settings`: where the providers and MCP servers
    files are, whose secret variables are known too."""
    given = given_variables(environ, dotenv)
    known = setting_variables() | DEVELOPMENT_VARIABLES
    unknown = sorted(set(given) - known)
    if unknown and settings is not None:
        files = (settings.providers.file, settings.worker.mcp_servers_file)
        unknown = sorted(set(unknown) - file_references(files))
    if unknown:
        raise ConfigError(unknown_message(unknown[0], given[unknown[0]], known))
