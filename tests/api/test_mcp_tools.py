"""The MCP server's tools say what their profile may do (api/mcp/tools.py): annotations
from the registered reach, failing closed, and a typed answer's schema beside the status a
waiting call answers."""

from agentrt.api.mcp.tools import annotations, output_schema
from agentrt.contracts.registered import RegisteredProfile

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def test_annotations_follow_reach_and_fail_closed() -> None:
    said = {
        reach: annotations(RegisteredProfile(name="p", reach=reach))
        for reach in ("read_only", "idempotent", "writes", None)
    }
    assert (said["read_only"].read_only_hint, said["read_only"].destructive_hint) == (True, False)
    assert said["idempotent"].read_only_hint is False and said["idempotent"].idempotent_hint
    assert said["writes"].destructive_hint and said["writes"].idempotent_hint is False
    assert said[None] == said["writes"]  # not said: a write


def test_output_schema_is_the_answer_or_the_status_and_only_for_objects() -> None:
    typed = output_schema(RegisteredProfile(name="p", output_schema=SCHEMA))
    assert typed is not None and typed["type"] == "object" and typed["anyOf"][0] == SCHEMA
    listed = RegisteredProfile(name="p", output_schema={"type": "array"})
    assert output_schema(listed) is None and output_schema(RegisteredProfile(name="p")) is None
