"""Child agents: a profile that names other profiles in `agents` offers each to its model as a
tool, and a call of one runs the child as a Temporal child workflow (workflows/children.py).

Here the pure parts: the checks a set of profiles passes when it loads (each child known, no
cycle), the tool a child appears as, the delegation's effect class, the child's run id, and
the requests of the delegation's activities."""

import difflib
import json
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from pydantic import BaseModel

from agentrt.contracts.calls import AtCall
from agentrt.contracts.enums import ToolEffect
from agentrt.contracts.errors import ConfigError
from agentrt.contracts.messages import ToolCall, ToolSpec, Usage
from agentrt.contracts.profiles import Profile

# What a child takes: one prompt, as a client's start gives it.
PROMPT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"prompt": {"type": "string", "description": "the task for the agent"}},
    "required": ["prompt"],
    "additionalProperties": False,
}

# The namespace of child run ids: uuid5 over "<parent run>/<call id>".
CHILD_NAMESPACE = uuid.UUID("5f0c6f2e-8d1b-4c4e-9a57-0c6a1e2b7d43")

_RANK = {
    ToolEffect.READ_ONLY: 0,
    ToolEffect.IDEMPOTENT_WRITE: 1,
    ToolEffect.NON_IDEMPOTENT_WRITE: 2,
}


def child_run_id(parent_run_id: str, call_id: str) -> str:
    """The child's run id (its workflow id): the same for the same call of the same run,
    however often the parent is retried, replayed or reset, so it starts one child."""
    return str(uuid.uuid5(CHILD_NAMESPACE, f"{parent_run_id}/{call_id}"))


def strongest(effects: Iterable[ToolEffect]) -> ToolEffect:
    """The strongest of `effects`; none at all is a read (a child with no tools changes
    nothing itself)."""
    return max(effects, key=_RANK.__getitem__, default=ToolEffect.READ_ONLY)


def delegation_effect(
    name: str, profiles: Mapping[str, Profile], effect_of: Callable[[str], ToolEffect]
) -> ToolEffect:
    """The effect class of a call of the child `name`: the strongest effect among its tools
    (`effect_of` a tool name) and, recursively, its own children's."""
    seen: set[str] = set()
    found: list[ToolEffect] = []
    pending = [name]
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        profile = profiles.get(current)
        if profile is None:  # unknown: the load check refuses it; fail closed meanwhile
            return ToolEffect.NON_IDEMPOTENT_WRITE
        found.extend(effect_of(t) for t in profile.tools)
        pending.extend(profile.agents)
    return strongest(found)


def agent_spec(child: Profile) -> ToolSpec:
    """The tool a child appears as: its name, its description (and its typed answer's
    schema, which the call's result holds), one `prompt` argument."""
    description = child.description or f"Delegate a task to the {child.name} agent."
    if child.output_schema is not None:
        schema = json.dumps(child.output_schema, sort_keys=True, separators=(",", ":"))
        description += f" It answers with JSON valid against this schema: {schema}"
    return ToolSpec(name=child.name, description=description, parameters=PROMPT_SCHEMA)


def check_agents(profiles: Mapping[str, Profile], tools: Iterable[str] = ()) -> None:
    """A set of profiles' children, when they load: each child a profile of the set (else
    the name and the closest valid one), no name both a tool and a child, no cycle."""
    names = sorted(profiles)
    tool_names = set(tools)
    for profile in profiles.values():
        for child in profile.agents:
            if child not in profiles:
                close = difflib.get_close_matches(child, names, n=1)
                hint = f"; the closest is {close[0]!r}" if close else f"; known: {names}"
                raise ConfigError(f"profile {profile.name!r} names unknown agent {child!r}{hint}")
            if child in tool_names or child in profile.tools:
                raise ConfigError(
                    f"profile {profile.name!r}: {child!r} is both a tool and an agent"
                )
    for name in names:
        cycle = _cycle_from(name, profiles, [])
        if cycle is not None:
            raise ConfigError(f"profiles call each other in a cycle: {' -> '.join(cycle)}")


def _cycle_from(name: str, profiles: Mapping[str, Profile], path: list[str]) -> list[str] | None:
    if name in path:
        return [*path[path.index(name) :], name]
    for child in profiles[name].agents:
        found = _cycle_from(child, profiles, [*path, name])
        if found is not None:
            return found
    return None


def prompt_of(call: ToolCall) -> str | None:
    """The prompt a delegation call gives its child, or None for arguments that are not
    one string `prompt`."""
    prompt = call.arguments.get("prompt")
    return prompt if isinstance(prompt, str) and prompt.strip() else None


class ChildRecordRequest(AtCall):
    """The delegation's result, recorded as the parent's tool result at its sequence: the
    child's answer when it completed, else why not (`refusal`: the call was refused before
    any child started, with its ErrorType)."""

    effect: ToolEffect  # the delegation's (the strongest of the child's tools)
    child_run_id: str | None = None
    child_status: str | None = None  # the child's RunStatus, or None: it never ended
    error_type: str | None = None
    refusal: str | None = None


class ChildAwaitRequest(BaseModel):
    """A child started before (by this call of a parent since reset): wait for its end."""

    child_run_id: str


class ChildEnd(BaseModel):
    """How a child awaited by `child.await` ended: its status, or the failure's type."""

    status: str | None = None
    error_type: str | None = None
    # What the child spent, when its workflow said (its result, or its failure's details).
    usage: Usage | None = None
