"""The one loader of the YAML files a deployment writes (profiles, scripted rules, MCP
servers, providers): read, parse and validate onto a pydantic model, each failure one
typed error naming the file."""

import json
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from agentrt.contracts.errors import ConfigError

M = TypeVar("M", bound=BaseModel)


def message(error: ErrorDetails) -> str:
    """An error's text; a model's own check (an unknown key, say) without pydantic's
    "Value error, " in front."""
    return error["msg"].removeprefix("Value error, ")


def problems(exc: ValidationError, _data: object) -> str:
    """Each validation error as `where: what`, where is its dotted location."""
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'file'}: {message(e)}" for e in exc.errors()
    )


def load_yaml(
    path: Path,
    model: type[M],
    what: str,
    *,
    error: type[ConfigError] = ConfigError,
    describe: Callable[[ValidationError, object], str] = problems,
) -> M:
    """`path` parsed (JSON when it ends in .json, YAML otherwise; an empty file is `{}`)
    and validated onto `model`. `what` names the file in every error ("profiles file")."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise error(f"cannot read {what} {path}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise error(f"{what} {path} is not UTF-8 text: {exc.reason}") from None
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise error(f"{what} {path} does not parse: {exc}") from None
    except RecursionError:
        raise error(f"{what} {path} does not parse: nested too deeply") from None
    try:
        return model.model_validate({} if data is None else data)
    except ValidationError as exc:
        raise error(f"{what} {path} is invalid: {describe(exc, data)}") from None
