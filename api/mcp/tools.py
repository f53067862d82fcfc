"""What the MCP server offers a principal: each published profile it may start, as a tool
(the Agent Card's rule for which are published: api/a2a/card.py `servable`), and the one
tool every caller has, `agentrt_run_status`.

A profile's tool says what its runs may do (`RegisteredProfile.reach`, from its tools'
declared effects): a profile whose tools only read is read-only; one that writes is not,
and destructive; idempotent when every write may repeat. Not said (a toolbox not listed
yet, a worker of an earlier build) reads as a non-idempotent write: fail closed."""

from collections.abc import Mapping
from typing import Any

from mcp.types import Tool, ToolAnnotations

from agentrt.api.a2a.card import servable
from agentrt.api.grants import Grants
from agentrt.contracts.registered import RegisteredProfile

STATUS_TOOL = "agentrt_run_status"
RUN_ID_CHARS = 36

# What a call answers while its run waits (for approval, input or an answer on a write):
# the run, where it stands, and where a person acts on it.
STATUS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "run_id": {"type": "string"},
        "status": {"type": "string"},
        "profile": {"type": "string"},
        "waiting_for": {"type": "string"},
        "approve_at": {"type": "string"},
        "answer": {"type": ["string", "null"]},
        "output": {"description": "a typed answer's object"},
        "error_type": {"type": ["string", "null"]},
    },
    "required": ["run_id", "status"],
}


def input_schema(max_prompt_chars: int) -> dict[str, Any]:
    """A profile's input: the prompt (profiles take no typed input)."""
    return {
        "type": "object",
        "properties": {
            "prompt": {
                "type": "string",
                "minLength": 1,
                "maxLength": max_prompt_chars,
                "description": "what the agent is asked",
            }
        },
        "required": ["prompt"],
        "additionalProperties": False,
    }


def output_schema(profile: RegisteredProfile) -> dict[str, Any] | None:
    """The typed answer's schema, or the status a call answers while its run waits: a
    client validates `structuredContent` against it, and both are what a call may answer.
    None for a text answer, and for a schema whose root is not an object (MCP clients
    before 2026-07-28 take only objects): the answer is then the text content alone."""
    schema = profile.output_schema
    if schema is None or schema.get("type") != "object":
        return None
    return {"type": "object", "anyOf": [schema, STATUS_SCHEMA]}


def annotations(profile: RegisteredProfile) -> ToolAnnotations:
    reach = profile.reach or "writes"
    return ToolAnnotations(
        title=profile.name,
        read_only_hint=reach == "read_only",
        destructive_hint=reach != "read_only",
        idempotent_hint=reach != "writes",
        open_world_hint=True,  # a model answers: not a closed domain
    )


def profile_tool(profile: RegisteredProfile, max_prompt_chars: int) -> Tool:
    return Tool(
        name=profile.name,
        description=profile.description or f"The {profile.name} agent.",
        input_schema=input_schema(max_prompt_chars),
        output_schema=output_schema(profile),
        annotations=annotations(profile),
    )


def status_tool() -> Tool:
    return Tool(
        name=STATUS_TOOL,
        description="Where a run started by another tool of this server stands: its "
        "status, and its answer once it has one. Takes the run_id that tool answered with.",
        input_schema={
            "type": "object",
            "properties": {"run_id": {"type": "string", "maxLength": RUN_ID_CHARS}},
            "required": ["run_id"],
            "additionalProperties": False,
        },
        output_schema=STATUS_SCHEMA,
        annotations=ToolAnnotations(title="run status", read_only_hint=True, idempotent_hint=True),
    )


def offered(
    profiles: Mapping[str, RegisteredProfile], grants: Grants | None
) -> dict[str, RegisteredProfile]:
    """The published profiles `grants` may start (None: the token may start nothing)."""
    if grants is None:
        return {}
    return {n: p for n, p in servable(profiles).items() if grants.allows(p)}
