"""The Markdown code-block runner (tests/_markdown.py) finds what it is there to find: a
snippet with a name it never binds (cf842b3's README used a `client` it never made), a
shell line naming a setting that does not exist or a command that does not parse, a YAML
file with a misspelt key. Each check is shown failing here, on a page made for it."""

import textwrap
from pathlib import Path

import pytest
import yaml

from agentrt.contracts.errors import ConfigError
from agentrt.core.settings_env import setting_variables
from tests._markdown import (
    as_file,
    check_shell,
    code_blocks,
    parse_data,
    run_python,
    unbound_names,
    yaml_kind,
)
from tests.test_readme_code import LOADERS, PARSERS

PAGE = """
# A page

```python
from agentrt import build_worker, Settings

settings = Settings()
worker, resources = build_worker(client, settings)
```

````markdown
```python
not code of this page
```
````

```python compile
async def handler(event):
    return [e for e in event if e] + [total]
```

- a list item with its own block:

  ```bash
  AGENTRT_TEMPORAL_ADRESS=x agentrt status RUN_ID; agentrt nosuchcommand
  agentrt-api token create --principal a --scope runs:start
  ```

```yaml
profiles:
  - {name: p, model: 'scripted:demo', aproval: none}
```

```python
answer = await __import__("asyncio").sleep(0, result=42)
```
"""


def _page(tmp_path: Path) -> Path:
    path = tmp_path / "page.md"
    path.write_text(textwrap.dedent(PAGE))
    return path


def test_blocks_are_found_with_their_language_flags_and_lines(tmp_path: Path) -> None:
    blocks = code_blocks(_page(tmp_path))
    assert [(b.lang, b.flags) for b in blocks] == [
        ("python", []), ("markdown", []), ("python", ["compile"]), ("bash", []),
        ("yaml", []), ("python", []),
    ]  # fmt: skip
    assert blocks[0].line == 5 and blocks[0].text.startswith("from agentrt import")
    assert blocks[3].text.startswith("AGENTRT_TEMPORAL_ADRESS")  # the list's indent removed


def test_a_name_never_bound_is_found(tmp_path: Path) -> None:
    first, _, handler, *_ = code_blocks(_page(tmp_path))
    assert unbound_names(first) == ["client (line 8)"]
    assert unbound_names(handler) == ["total (line 19)"]  # parameters and targets are bound


def test_a_bad_setting_and_a_command_that_does_not_parse_are_found(tmp_path: Path) -> None:
    shell = code_blocks(_page(tmp_path))[3]
    problems = check_shell(shell, setting_variables(), PARSERS)
    assert "AGENTRT_TEMPORAL_ADRESS is no setting" in problems
    assert any("`agentrt nosuchcommand` does not parse" in p for p in problems), problems
    assert not any("token create" in p for p in problems)  # that one parses


def test_a_yaml_file_is_loaded_by_its_own_loader(tmp_path: Path) -> None:
    block = code_blocks(_page(tmp_path))[4]
    data = parse_data(block)
    kind = yaml_kind(data)
    assert kind == "profiles"
    path = tmp_path / "profiles.yaml"
    path.write_text(yaml.safe_dump(as_file(data, kind)))
    with pytest.raises(ConfigError, match="aproval"):
        LOADERS[kind](path)


async def test_a_block_runs_with_top_level_await(tmp_path: Path) -> None:
    scope = await run_python(code_blocks(_page(tmp_path))[5])
    assert scope["answer"] == 42
