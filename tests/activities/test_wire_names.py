"""Tool names with '.' (MCP `server.tool`) on an OpenAI-compatible wire: reversible, no clash."""

import re

import pytest

from agentrt.activities.providers._wire_names import WireNames, is_wire_safe
from agentrt.activities.providers.openai_compat import OpenAICompatProvider
from agentrt.contracts.messages import Message, ProviderRequest, ToolCall, ToolSpec
from tests.activities.test_openai_provider import (
    API_KEY,
    Canned,
    FakeServer,
    completion,
    server,  # noqa: F401  (the module-scoped fixture)
    tool_call,
)

WIRE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def test_safe_names_are_unchanged_and_unsafe_ones_are_sanitised() -> None:
    names = WireNames(["lookup_order", "crm.get_customer", "files.read-file"])
    assert names.wire("lookup_order") == "lookup_order"
    assert names.wire("crm.get_customer") == "crm_get_customer"
    assert names.wire("files.read-file") == "files_read-file"
    assert names.real("crm_get_customer") == "crm.get_customer"
    assert names.real("made_up") == "made_up"  # unknown: left for the tool layer to refuse


def test_colliding_names_get_distinct_reversible_wire_names() -> None:
    real = ["a.b", "a_b", "a:b", "a b", "x" * 80, "x" * 80 + ".y", "ü.tool", "...", ""]
    names = WireNames(real)
    wires = [names.wire(n) for n in real]
    assert all(WIRE.match(w) for w in wires), wires
    assert len(set(wires)) == len(real)  # no collisions
    assert [names.real(w) for w in wires] == real  # reversible
    assert names.wire("a_b") == "a_b"  # the safe name keeps its own


def test_offered_tools_win_over_names_only_in_the_conversation() -> None:
    # A made-up call named like a tool's sanitised form must not steal that form.
    names = WireNames(["crm.lookup"], others=["crm_lookup", "crm.lookup"])
    assert names.wire("crm.lookup") == "crm_lookup"
    assert names.wire("crm_lookup") != "crm_lookup"
    assert is_wire_safe(names.wire("crm_lookup"))


@pytest.fixture
async def provider(server: FakeServer):  # type: ignore[no-untyped-def]  # noqa: F811
    server.replies.clear()
    server.seen.clear()
    p = OpenAICompatProvider(api_key=API_KEY, base_url=server.base_url, timeout=5)
    yield p
    await p.aclose()


async def test_dotted_tool_names_round_trip_through_the_provider(
    server: FakeServer,  # noqa: F811
    provider: OpenAICompatProvider,
) -> None:
    specs = [
        ToolSpec(name="crm.get_customer", description="Get a customer."),
        ToolSpec(name="crm_get_customer", description="A different tool."),
    ]
    request = ProviderRequest(
        model="m",
        messages=[
            Message(role="user", content="Who is C-1?"),
            Message(role="assistant", tool_calls=[ToolCall(call_id="r1.1",
                                                           name="crm.get_customer")]),
            Message(role="tool", content="{}", tool_call_id="r1.1", tool_name="crm.get_customer"),
        ],
        tools=specs,
    )  # fmt: skip
    dotted_wire = WireNames([s.name for s in specs]).wire("crm.get_customer")
    calls = [tool_call("c1", dotted_wire, "{}"), tool_call("c2", "crm_get_customer", "{}")]
    server.replies.append(Canned(body=completion({"tool_calls": calls}, "tool_calls")))
    reply = await provider.complete(request)
    sent = server.seen[0].body
    offered = [t["function"]["name"] for t in sent["tools"]]
    assert all(WIRE.match(n) for n in offered) and len(set(offered)) == 2
    assert offered[1] == "crm_get_customer" and offered[0] == dotted_wire
    # The transcript's earlier call is sent under the same wire name as the offered tool.
    assert sent["messages"][1]["tool_calls"][0]["function"]["name"] == dotted_wire
    assert [c.name for c in reply.tool_calls] == ["crm.get_customer", "crm_get_customer"]
