"""Issue 41, beside L8 (found while fixing it): a tool call whose arguments nest deeply is a
call with invalid arguments, not a run that cannot go on.

Before, arguments nested past 255 levels made the model activity's result impossible to
encode for Temporal (pydantic's depth limit): five provider calls, then `provider_failed`;
at about 200 levels the result encoded but the workflow could not decode it, and its task
failed on every retry, the run stuck; past about 1,000 the provider's own parse raised
RecursionError. Now arguments deeper than 64 levels become the invalid-arguments marker:
the tool answers the model "invalid arguments" and the run goes on."""

import json

from agentrt.contracts.enums import EventKind, RunStatus
from agentrt.contracts.messages import INVALID_ARGUMENTS_KEY, bounded_arguments
from agentrt.contracts.output import MAX_DEPTH
from agentrt.starter.facade import AgentRuntime
from tests.activities.test_openai_provider import Canned, completion, tool_call
from tests.workflows.test_models import World, rt, world  # noqa: F401  (fixtures)


def _nested(depth: int) -> str:
    return '{"order_id": ' + "[" * depth + "]" * depth + "}"


def test_arguments_past_the_bound_become_the_invalid_arguments_marker() -> None:
    ok = json.loads(_nested(MAX_DEPTH - 2))
    assert bounded_arguments(ok) is ok
    deep = bounded_arguments(json.loads(_nested(300)))
    assert list(deep) == [INVALID_ARGUMENTS_KEY] and "deeper than 64" in deep[INVALID_ARGUMENTS_KEY]


async def test_a_call_with_deeply_nested_arguments_gets_invalid_arguments_and_the_run_ends(
    rt: AgentRuntime,  # noqa: F811
    world: World,  # noqa: F811
) -> None:
    world.local.replies.clear()
    for depth in (200, 300, 5_000):
        world.local.replies += [
            Canned(
                body=completion(
                    {"tool_calls": [tool_call("x", "lookup_order", _nested(depth))]}, None
                )
            ),
            Canned(body=completion({"content": "That order number was garbled."})),
        ]
        view = await rt.run("local-agent", f"How is order 1042 ({depth})?")
        assert view.status is RunStatus.COMPLETED, (depth, view)
        assert view.answer == "That order number was garbled."
        [tool] = [e for e in await rt.events(view.run_id) if e.kind is EventKind.TOOL]
        assert tool.payload["is_error"] is True, tool.payload
