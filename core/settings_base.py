"""What every settings group is made of: a small pydantic-settings model reading its own
`AGENTRT_*` variables (and `.env`) when built without arguments, and the name of the
variable that sets each field.

The variable names are those of the flat settings before grouping, which deployments set:
a group's `env_prefix` names most of them (`AGENTRT_TEMPORAL_` + `address`), and a field
whose name was not its group's prefix plus its own carries the full old name as its alias
(`task_queue` in the Temporal group is `AGENTRT_TASK_QUEUE`). `env_name` tells which, and
the docs' Settings page (docs/reference/settings.md) lists them all
(tests/core/test_settings_env.py keeps both true).

A new field of a group is `AGENTRT_<GROUP PREFIX><FIELD>` without more ado: issue 28's
Temporal TLS settings went in `TemporalSettings` as `AGENTRT_TEMPORAL_TLS_...`. The groups
themselves: core/settings_process.py (what a process connects to and serves) and
core/settings_runs.py (what runs may use and keep); core/settings.py gathers them.
"""

from collections.abc import Mapping
from typing import Any

from pydantic_settings import BaseSettings, SettingsConfigDict

from agentrt.contracts.errors import ConfigError


class SettingsGroup(BaseSettings):
    # Unknown AGENTRT_ variables are ignored, as they were before grouping. No
    # populate_by_name: with it, pydantic-settings would also read an aliased field under
    # its prefix and name (AGENTRT_URL for `database.url`), a variable that never existed.
    model_config = SettingsConfigDict(env_prefix="AGENTRT_", env_file=".env", extra="ignore")

    def __init__(self, **values: Any) -> None:
        """By field name: `TemporalSettings(task_queue="q")`; the rest from the environment."""
        super().__init__(**type(self).by_alias(values))

    @classmethod
    def by_alias(cls, values: Mapping[str, Any]) -> dict[str, Any]:
        """`values`, given by field name, keyed as validation expects: an aliased field by
        its alias. A name no field has is a mistake (extra="ignore" is for the environment);
        underscored ones are pydantic-settings' own (`_env_file=None`)."""
        out: dict[str, Any] = {}
        for key, value in values.items():
            field = cls.model_fields.get(key)
            if field is None and not key.startswith("_"):
                raise TypeError(f"{cls.__name__} has no setting {key}")
            alias = None if field is None else field.validation_alias
            out[alias if isinstance(alias, str) else key] = value
        return out


def env_name(group: type[SettingsGroup], field: str) -> str:
    """The environment variable that sets `field` of `group`."""
    alias = group.model_fields[field].validation_alias
    if isinstance(alias, str):
        return alias.upper()
    return f"{group.model_config.get('env_prefix', '')}{field}".upper()


def split_pairs(raw: str, setting: str) -> dict[str, str]:
    """`name=value,…` as a mapping; a bad entry is a ConfigError naming `setting`."""
    out: dict[str, str] = {}
    for part in (p.strip() for p in raw.split(",") if p.strip()):
        key, sep, value = part.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ConfigError(f"{setting}: bad entry {part!r} (want name=value)")
        out[key.strip()] = value.strip()
    return out


def split_names(raw: str) -> list[str]:
    """`a,b,…` as a list, blanks dropped."""
    return [p.strip() for p in raw.split(",") if p.strip()]
