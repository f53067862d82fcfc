"""Unknown keys in what a deployment writes (profiles, providers, MCP servers, rules), each
named with the closest key it could have meant: a misspelt `aproval:` must be refused
with `approval` in the message, not silently leave approval at its default."""

import difflib
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, model_validator
from pydantic_core import PydanticCustomError

UNKNOWN_KEYS = "unknown_keys"  # the pydantic error type of an unknown key (API: a 422)


def unknown_keys(
    given: Iterable[object], known: Iterable[str], prefix: str = "", noun: str = "key"
) -> str | None:
    """One line naming every key of `given` not in `known`, each with the closest known
    one (difflib) when there is one; None when every key is known. `prefix` is where the
    keys sit (`timeouts.`)."""
    choices = sorted(known)
    wrong = sorted(str(k) for k in given if k not in choices)
    if not wrong:
        return None
    parts, guessed = [], True
    for key in wrong:
        close = difflib.get_close_matches(key, choices, n=1, cutoff=0.6)
        guessed = guessed and bool(close)
        hint = f" (did you mean {prefix}{close[0]}?)" if close else ""
        parts.append(f"{prefix}{key}{hint}")
    label = f"unknown {noun}" if len(wrong) == 1 else f"unknown {noun}s"
    # The whole list only when some key resembles none: a close guess says enough.
    known_list = "" if guessed else f"; known: {', '.join(prefix + c for c in choices)}"
    return f"{label} {', '.join(parts)}{known_list}"


def field_keys(model: type[BaseModel]) -> set[str]:
    """The keys a model accepts: its field names and their string aliases."""
    keys = set(model.model_fields)
    keys |= {f.alias for f in model.model_fields.values() if isinstance(f.alias, str)}
    return keys


class Strict(BaseModel):
    """A model of a file a person writes: an unknown key is an error naming it and the
    closest known key (its location and file are added by the loader, core/yaml_file.py)."""

    model_config = ConfigDict(extra="forbid")
    _noun: ClassVar[str] = "key"  # a request body's say "field"

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            problem = unknown_keys(data.keys(), field_keys(cls), noun=cls._noun)
            if problem is not None:
                # Its own error type, so a caller can tell it apart (the API answers 422).
                raise PydanticCustomError(UNKNOWN_KEYS, problem)
        return data
