"""Approval policies: load Cedar policy sets (`cedarpy`; no parser of ours) from the file a
setting names, and evaluate one over an approval-bound turn. Loading checks every set
parses: a worker with a bad one does not start (a ConfigError naming the set and the
reason). Evaluation fails safe: a request Cedar cannot build, or any policy that errs on
it (an unknown attribute, a type mismatch), is a PolicyError, and the caller asks a person.
Runs in the worker's activities and the CLI, never in workflow code (native code)."""

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cedarpy
import yaml

from agentrt.contracts.errors import ConfigError
from agentrt.contracts.messages import ToolCall, ToolSpec, Usage
from agentrt.contracts.policy import ACTION_APPROVE, ACTION_DENY, ASK_ACTIONS, Outcome, parse_ref


class PolicyError(Exception):
    """The policy could not decide (the reason is Cedar's): ask a person."""


@dataclass(frozen=True)
class PolicySet:
    name: str
    version: str
    text: str

    @property
    def ref(self) -> str:
        return f"{self.name}@{self.version}"


@dataclass(frozen=True)
class Verdict:
    outcome: Outcome
    approvers: int
    reason: str


@dataclass(frozen=True)
class Asked:
    """What a turn is judged on, besides its calls."""

    profile: str
    initiator: str
    spend: Usage


def checked(name: str, version: object, text: str) -> PolicySet:
    """A policy set whose text Cedar parses; a ConfigError naming it otherwise."""
    ref = f"{name}@{version}"
    try:
        parse_ref(ref)
        cedarpy.policies_to_json_str(text)
    except ValueError as exc:
        reason = " ".join(str(exc).split())
        raise ConfigError(f"approval policy {ref}: {reason}") from None
    return PolicySet(name, str(version), text)


def load_policies(path: Path) -> dict[str, PolicySet]:
    """The policies file: `policies: [{name, version, cedar | file}]`, by name@version."""
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"policies file {path}: {' '.join(str(exc).split())}") from None
    entries = data.get("policies") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise ConfigError(f"policies file {path}: expected a list under `policies`")
    loaded: dict[str, PolicySet] = {}
    for entry in entries:
        if not isinstance(entry, dict) or not entry.get("name") or entry.get("version") is None:
            raise ConfigError(f"policies file {path}: each policy needs a name and a version")
        text = entry.get("cedar")
        if text is None and entry.get("file"):
            try:
                text = (path.parent / str(entry["file"])).read_text()
            except OSError as exc:
                raise ConfigError(f"policies file {path}: {exc}") from None
        if not isinstance(text, str):
            raise ConfigError(f"policies file {path}: policy {entry['name']} has no Cedar text")
        policy = checked(str(entry["name"]), entry["version"], text)
        if policy.ref in loaded:
            raise ConfigError(f"policies file {path}: {policy.ref} is given twice")
        loaded[policy.ref] = policy
    return loaded


def served_policies(path: Path | None, profiles: Mapping[str, Any]) -> dict[str, PolicySet]:
    """The worker's policies: the file's, each parsed; a profile naming a policy the file
    does not hold (or a malformed reference) is a ConfigError: the worker does not start."""
    loaded = load_policies(path) if path is not None else {}
    for profile in profiles.values():
        ref = getattr(profile, "approval_policy", None)
        if ref is None:
            continue
        try:
            parse_ref(ref)
        except ValueError as exc:
            raise ConfigError(f"profile {profile.name}: {exc}") from None
        if ref not in loaded:
            where = (
                f"the policies file {path}" if path else "no policies file (AGENTRT_POLICIES_FILE)"
            )
            raise ConfigError(f"profile {profile.name}: approval policy {ref} is not in {where}")
    return loaded


def _value(v: Any) -> Any:
    """A JSON argument as a Cedar value: Cedar has no float and no null. An integral float
    is an integer; any other float is a PolicyError (a person decides); a null is left out."""
    if isinstance(v, bool | int | str):
        return v
    if isinstance(v, float):
        if v.is_integer():
            return int(v)
        raise PolicyError(f"argument value {v} is not an integer (Cedar has no floats)")
    if isinstance(v, list):
        return [_value(x) for x in v if x is not None]
    if isinstance(v, dict):
        return {str(k): _value(x) for k, x in v.items() if x is not None}
    raise PolicyError(f"argument of type {type(v).__name__} has no Cedar value")


def _spend(usage: Usage) -> dict[str, int]:
    spend = {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens}
    if usage.cost_usd is not None:  # unknown cost: absent, so a policy reading it errs
        spend["cost_micros"] = round(usage.cost_usd * 1_000_000)
    return spend


def _request(call: ToolCall, asked: Asked, action: str) -> dict[str, Any]:
    context = {
        "tool": call.name,
        "args": _value(call.arguments),
        "profile": asked.profile,
        "initiator": asked.initiator,
        "spend": _spend(asked.spend),
    }
    return {
        "principal": f"Initiator::{json.dumps(asked.initiator)}",
        "action": f'Action::"{action}"',
        "resource": f"Tool::{json.dumps(call.name)}",
        "context": context,
    }


def _permits(policy: PolicySet, call: ToolCall, asked: Asked, action: str) -> bool:
    result = cedarpy.is_authorized(_request(call, asked, action), policy.text, [])
    if result.diagnostics.errors:
        raise PolicyError("; ".join(" ".join(e.split()) for e in result.diagnostics.errors))
    return bool(result.allowed)


def judge_call(policy: PolicySet, call: ToolCall, asked: Asked) -> Verdict:
    """One call's verdict: deny wins, then approve, then the largest ask_N (else 1)."""
    if _permits(policy, call, asked, ACTION_DENY):
        return Verdict("deny", 1, f"{call.name} denied by the policy")
    if _permits(policy, call, asked, ACTION_APPROVE):
        return Verdict("allow", 1, f"{call.name} approved by the policy")
    asked_n = [n for action, n in ASK_ACTIONS.items() if _permits(policy, call, asked, action)]
    n = max(asked_n, default=1)
    return Verdict("ask", n, f"{call.name} needs {n} {'person' if n == 1 else 'people'}")


def judge(policy: PolicySet, calls: list[ToolCall], asked: Asked) -> Verdict:
    """A turn's verdict over its approval-bound calls: any deny denies, all allowed allows,
    else the most people any call asks for. A PolicyError when any call cannot be judged."""
    verdicts = [judge_call(policy, c, asked) for c in calls]
    denied = [v for v in verdicts if v.outcome == "deny"]
    if denied:
        return denied[0]
    if verdicts and all(v.outcome == "allow" for v in verdicts):
        return Verdict("allow", 1, "; ".join(v.reason for v in verdicts))
    asks = [v for v in verdicts if v.outcome == "ask"]
    most = max(asks, key=lambda v: v.approvers, default=Verdict("ask", 1, "no call to judge"))
    return most


# What Cedar says when a policy reads an attribute the request lacks, or compares values of
# the wrong types: with every declared argument present (each of its declared type), either
# is a fault of the policy, not of a call. Other errors (a `decimal("")` of a sample) depend
# on the values, so only a real call can show them.
_LOAD_FAULTS = ("does not have the attribute", "type error")
_UNKNOWN = object()


def _sample(schema: Any) -> Any:
    """A value of the JSON schema's declared type (every property of an object present),
    or _UNKNOWN where the schema does not say (then its tool is not checked at load)."""
    if not isinstance(schema, dict):
        return _UNKNOWN
    variants = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(variants, list):  # Optional[X] as pydantic writes it: X's sample
        kept = [v for v in variants if not (isinstance(v, dict) and v.get("type") == "null")]
        return _sample(kept[0]) if len(kept) == 1 else _UNKNOWN
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        kind = kinds[0] if len(kinds) == 1 else None
    if kind == "object":
        props = schema.get("properties")
        if not isinstance(props, dict):
            return _UNKNOWN  # free-form: which attributes it has is not declared
        values = {str(k): _sample(v) for k, v in props.items()}
        return _UNKNOWN if any(v is _UNKNOWN for v in values.values()) else values
    samples = {"string": "", "integer": 0, "number": 0, "boolean": False, "array": []}
    return samples.get(str(kind), _UNKNOWN)


def check_against_tools(policy: PolicySet, profile: str, tools: list[ToolSpec]) -> None:
    """At start, for a profile naming `policy`: judge a call of each of its approval-bound
    tools with every declared argument present, a known cost and every action asked. A
    policy that reads an attribute no such call has, or mismatches its type, is a
    ConfigError naming the set, the tool and Cedar's reason (the worker does not start).
    A branch guarded by another principal or tool is not reached here; a run's call that
    errs there asks a person, as ever."""
    asked = Asked(profile, "start-check", Usage(cost_usd=0.0))
    for spec in tools:
        arguments = _sample(spec.parameters or {"type": "object", "properties": {}})
        if not isinstance(arguments, dict):
            continue
        call = ToolCall(call_id="start-check", name=spec.name, arguments=arguments)
        try:
            judge_call(policy, call, asked)
        except PolicyError as exc:
            if any(fault in str(exc) for fault in _LOAD_FAULTS):
                raise ConfigError(
                    f"approval policy {policy.ref} (profile {profile}, tool {spec.name}):"
                    f" {exc}; the tool's arguments: {', '.join(arguments) or 'none'}"
                ) from None
