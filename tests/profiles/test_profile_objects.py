"""Issue 42 item 2: a profile holds its tools as objects (`@tool` functions, plain functions,
toolboxes, MCP servers), keeps their names as its data, and the worker serving it loads
the objects; `McpServer` is the one type of an MCP server, the servers file loads onto it."""

from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from agentrt import McpServer, Profile, Settings, Toolbox, ToolEffect, tool
from agentrt.activities.toolbox.mcp_config import load_mcp_config
from agentrt.contracts.errors import ConfigError
from agentrt.contracts.registered import RegisteredProfile
from agentrt.workers.compose import compose


@tool(effect=ToolEffect.READ_ONLY)
def lookup(order_id: int) -> str:
    """Look an order up."""
    return f"order {order_id}"


def refund(order_id: int) -> str:
    """Refund an order (a plain function: the worker makes it a fenced write)."""
    return f"refunded {order_id}"


@tool(effect=ToolEffect.READ_ONLY)
def balance(account: str) -> str:
    """An account's balance."""
    return f"{account}: 10"


BILLING = Toolbox("billing", [balance])
CRM = McpServer(name="crm", url="http://127.0.0.1:9/mcp", headers_from_env={"A": "CRM_A"})


def _profile(**extra: object) -> Profile:
    return Profile(name="p", model="scripted:demo", **extra)  # type: ignore[arg-type]


def test_objects_become_names_and_stay_beside_the_data() -> None:
    p = _profile(tools=["shared.tool", lookup, refund, BILLING, CRM])
    assert p.tools == ["shared.tool", "lookup", "refund"]
    assert p.toolboxes == ["billing", "crm"]
    assert p.held() == (lookup, refund, BILLING, CRM)
    named = _profile(tools=["shared.tool", "lookup", "refund"], toolboxes=["billing", "crm"])
    # The data, the registration and its digest are the names' alone.
    assert p.model_dump() == named.model_dump()
    assert RegisteredProfile.of(p).digest == RegisteredProfile.of(named).digest
    assert Profile.model_validate(p.model_dump()).held() == ()
    assert p.model_copy(update={"tools": []}).held() == p.held()
    assert p.writes_unapproved is False


def test_anything_else_in_tools_is_refused_with_its_type() -> None:
    with pytest.raises(ValidationError, match="'int', which is not a tool name"):
        _profile(tools=[42])


def test_mcp_server_infers_its_transport_and_refuses_mixed_fields() -> None:
    stdio = McpServer(name="files", command="python", args=["-m", "srv"])
    assert stdio.transport == "stdio" and CRM.transport == "http"
    assert stdio.profile_entry() == ("toolbox", "files")
    for bad in (
        {"name": "x"},
        {"name": "x", "command": "c", "url": "http://h/mcp"},
        {"name": "x", "command": "c", "headers_from_env": {"A": "B"}},
        {"name": "x", "url": "http://h/mcp", "transport": "stdio"},
    ):
        with pytest.raises(ValidationError):
            McpServer(**bad)  # type: ignore[arg-type]


def test_header_secrets_are_never_shown_and_resolve_with_the_environment() -> None:
    server = McpServer(name="crm", url="http://h/mcp", headers={"Authorization": "Bearer s3"})
    assert "s3" not in repr(server) and "s3" not in server.model_dump_json()
    assert CRM.resolved({"CRM_A": "v"}) == {"A": "v"}
    assert server.resolved({}) == {"Authorization": "Bearer s3"}
    with pytest.raises(ConfigError, match="CRM_A"):
        CRM.resolved({})


def test_the_servers_file_loads_onto_the_same_type(tmp_path: Path) -> None:
    file = tmp_path / "servers.yaml"
    entry = {"name": "files", "transport": "stdio", "command": "python", "args": ["-m", "s"]}
    file.write_text(yaml.safe_dump({"servers": [entry]}))
    (server,) = load_mcp_config(file).servers
    assert server == McpServer(name="files", command="python", args=["-m", "s"])


def test_the_worker_loads_what_its_profiles_hold(settings: Settings, tmp_path: Path) -> None:
    # compose opens nothing: no database, no MCP server is reached.
    s = settings.replace(worker={"toolbox_entry_points": False})
    resources = compose(s, profiles=[_profile(tools=[lookup, refund, BILLING, CRM])])
    try:
        registry = resources.registry
        assert registry is not None
        refund_tool = registry.get("refund")
        assert refund_tool is not None
        assert refund_tool.effect is ToolEffect.NON_IDEMPOTENT_WRITE  # fail closed
        assert registry.group("billing") == ["balance"]
        assert registry.pending("crm.anything")  # listed when the worker runs
        assert [m.name for m in resources.mcp_servers] == ["crm"]
    finally:
        resources.close()


def test_two_different_objects_of_one_name_clash(settings: Settings) -> None:
    other = McpServer(name="crm", url="http://127.0.0.1:10/mcp")
    with pytest.raises(ConfigError, match="two different MCP servers are named 'crm'"):
        compose(settings, profiles=[_profile(tools=[CRM]), Profile(
            name="q", model="scripted:demo", tools=[other])])  # fmt: skip
