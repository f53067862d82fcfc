"""The settings' documentation, made from the settings classes themselves: each field's
`description` is its meaning, its default is rendered from the field (or, where the value
in code would mislead, from the `shown` text a field declared with `setting` gives). The docs
site's Settings table (docs/reference/settings.md) and the console scripts' `--help` are
made here, so neither can drift from the code (tests/core/test_settings_doc.py compares the
page with `table`). Rewrite the page's table after changing a setting:
`python -m tests.core.test_settings_doc`."""

from collections.abc import Iterable
from enum import Enum
from typing import Any

from pydantic import Field
from pydantic.config import JsonDict
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings

Groups = Iterable[tuple[str, type[BaseSettings]]]


def variable(group: type[BaseSettings], field: str) -> str:
    """The environment variable of `field`: its alias, else the group's prefix and name
    (core.settings_base.env_name, for any settings class)."""
    alias = group.model_fields[field].validation_alias
    if isinstance(alias, str):
        return alias.upper()
    return f"{group.model_config.get('env_prefix', '')}{field}".upper()


def setting(default: Any, description: str, *, shown: str | None = None, **more: Any) -> Any:
    """A settings field: `description` is its meaning; `shown`, what the Settings page and `--help`
    say in place of a default that would mislead as it stands in code (computed from other
    settings, generated, a path under the checkout). `more`: Field's own (ge, le...)."""
    extra: JsonDict | None = {"shown_default": shown} if shown is not None else None
    return Field(default=default, description=description, json_schema_extra=extra, **more)


def capped(default: int, ceiling: int, description: str) -> Any:
    """A count setting from 1 to `ceiling`: the bound is enforced and said in its
    description, from the one number, so the Settings page cannot name another."""
    return Field(
        default=default, ge=1, le=ceiling, description=f"{description} (at most {ceiling})"
    )


def shown_default(info: FieldInfo) -> str:
    """The default as the Settings page shows it: `text` in backquotes, numbers bare, unset."""
    extra = info.json_schema_extra
    if isinstance(extra, dict) and isinstance(extra.get("shown_default"), str):
        return str(extra["shown_default"])
    value = info.get_default(call_default_factory=True)
    if value is None or value == "":
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, Enum):
        value = value.value
    return f"`{value}`"


def meaning(info: FieldInfo) -> str:
    return (info.description or "").strip()


def rows(groups: Groups) -> list[tuple[str, str, str, str]]:
    """(setting, variable, default, meaning) of every field of every group, in order."""
    out = []
    for name, group in groups:
        for field, info in group.model_fields.items():
            out.append((f"{name}.{field}", variable(group, field), shown_default(info),
                        meaning(info)))  # fmt: skip
    return out


def table(groups: Groups) -> str:
    """The Settings page's table (markdown): docs/reference/settings.md."""
    lines = ["| setting | variable | default | meaning |", "|---|---|---|---|"]
    for setting, var, default, text in rows(groups):
        cells = (c.replace("|", "\\|") for c in (default, text))  # a cell's own bars
        lines.append(f"| `{setting}` | `{var}` | {' | '.join(cells)} |")
    return "\n".join(lines) + "\n"


def help_text(groups: Groups, title: str) -> str:
    """An argparse epilog: each variable, its meaning and its default, one line each."""
    listed = rows(groups)
    width = max(len(var) for _, var, _, _ in listed)
    lines = [title]
    for _, var, default, text in listed:
        plain = default.replace("`", "")
        lines.append(f"  {var.ljust(width)}  {text.replace('`', '')}; default {plain}")
    return "\n".join(lines)
