"""MCP servers as tool sources, against real MCP servers (tests/activities/mcp_servers):
a stdio child process and streamable HTTP on 127.0.0.1."""

import os
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from agentrt.activities.fence import WriteActivities, _sql
from agentrt.activities.ports import Tool, ToolContext, ToolFailure, ToolInputError
from agentrt.activities.registry import ToolRegistry
from agentrt.activities.toolbox.mcp import IDEMPOTENCY_META_KEY, flatten, open_mcp_toolboxes
from agentrt.activities.toolbox.mcp_config import McpConfig, load_mcp_config
from agentrt.activities.tools import ToolActivities
from agentrt.contracts.enums import ToolEffect
from agentrt.contracts.errors import ConfigError, ErrorType
from agentrt.contracts.ids import idempotency_key
from agentrt.contracts.run import FenceRequest, FenceState
from agentrt.store.runs.record import RunStore
from agentrt.store.steps.tools import ToolStepStore
from agentrt.workers.compose import WorkerResources
from tests.activities._steps import begin_run, tool_request
from tests.activities.mcp_servers import HttpMcpServer, start_http_server, stdio_server, writes


def _config(
    tmp_path: Path, servers: list[dict[str, Any]], env: dict[str, str] | None = None
) -> McpConfig:
    path = tmp_path / f"mcp-{uuid.uuid4().hex[:6]}.yaml"
    path.write_text(yaml.safe_dump({"servers": servers}))
    return load_mcp_config(path, env if env is not None else dict(os.environ))


def _ctx(key: str = "key-1") -> ToolContext:
    return ToolContext(run_id="run-1", call_id="c1", idempotency_key=key)


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[HttpMcpServer]:
    server = start_http_server(tmp_path, tmp_path / "http-writes.jsonl")
    yield server
    server.stop()


class Opened:
    def __init__(self) -> None:
        self.closers: list[Any] = []

    async def open(self, config: McpConfig) -> dict[str, Tool]:
        boxes, close = await open_mcp_toolboxes(config)
        self.closers.append(close)
        return {t.spec.name: t for t in flatten(boxes)}


@pytest.fixture
async def opened() -> AsyncIterator[Opened]:
    o = Opened()
    yield o
    for close in o.closers:
        await close()


# --- config -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("servers: [", "does not parse"),
        ("servers:\n  - {name: a, transport: ftp, url: x}", "servers.0"),
        ("servers:\n  - {name: a.b, transport: stdio, command: x}", "name"),
        ("servers:\n  - {name: a, transport: stdio}", "command"),
        ("servers:\n  - {name: a, transport: stdio, command: x, effects: {t: MAYBE}}", "effects"),
        ("servers:\n  - {name: a, transport: stdio, command: x, colour: red}", "colour"),
        (
            "servers:\n  - {name: a, transport: stdio, command: x}\n"
            "  - {name: a, transport: stdio, command: y}",
            "duplicate server name",
        ),
    ],
)
def test_a_bad_servers_file_is_a_config_error(tmp_path: Path, text: str, needle: str) -> None:
    path = tmp_path / "mcp.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match="MCP servers file") as err:
        load_mcp_config(path, {})
    assert needle in str(err.value)


def test_a_missing_servers_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read MCP servers file"):
        load_mcp_config(tmp_path / "absent.yaml", {})


def test_an_unknown_header_variable_is_a_config_error_at_start(tmp_path: Path) -> None:
    server = {"name": "crm", "transport": "http", "url": "http://127.0.0.1:9/mcp",
              "headers_from_env": {"Authorization": "AGENTRT_TEST_NO_SUCH_VAR"}}  # fmt: skip
    with pytest.raises(ConfigError, match="AGENTRT_TEST_NO_SUCH_VAR"):
        _config(tmp_path, [server], env={})
    config = _config(tmp_path, [server], env={"AGENTRT_TEST_NO_SUCH_VAR": "Bearer x"})
    assert config.servers[0].resolved({"AGENTRT_TEST_NO_SUCH_VAR": "Bearer x"}) == {
        "Authorization": "Bearer x"
    }


def test_a_child_variable_must_be_set_and_named_once(tmp_path: Path) -> None:
    server = stdio_server("shop", tmp_path / "w.jsonl",
                          env_from_env={"SHOP_TOKEN": "AGENTRT_TEST_NO_SUCH_VAR"})  # fmt: skip
    with pytest.raises(ConfigError, match=r"child environment variable.*AGENTRT_TEST_NO_SUCH_VAR"):
        _config(tmp_path, [server], env={})
    both = {**server, "env": {"SHOP_TOKEN": "in the file"}}
    with pytest.raises(ConfigError, match="set in both env and env_from_env: SHOP_TOKEN"):
        _config(tmp_path, [both], env={"AGENTRT_TEST_NO_SUCH_VAR": "x"})


async def test_a_stdio_child_gets_its_variables_from_this_process(
    tmp_path: Path, opened: Opened, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The token reaches the child under its own name; nothing else of this process's
    environment does (the MCP SDK passes only its default few)."""
    monkeypatch.setenv("AGENTRT_TEST_SHOP_TOKEN", "s3cret")
    monkeypatch.setenv("AGENTRT_TEST_NOT_PASSED", "private")
    server = stdio_server("shop", tmp_path / "w.jsonl", env={"SHOP_MODE": "test"},
                          env_from_env={"SHOP_TOKEN": "AGENTRT_TEST_SHOP_TOKEN"})  # fmt: skip
    tools = await opened.open(_config(tmp_path, [server]))
    look = tools["shop.environment"]
    assert await look({"name": "SHOP_TOKEN"}, _ctx()) == "s3cret"
    assert await look({"name": "SHOP_MODE"}, _ctx()) == "test"
    assert await look({"name": "AGENTRT_TEST_SHOP_TOKEN"}, _ctx()) == "<unset>"
    assert await look({"name": "AGENTRT_TEST_NOT_PASSED"}, _ctx()) == "<unset>"


# --- listing, naming, effects --------------------------------------------------------------


async def test_stdio_tools_are_listed_named_and_classified(tmp_path: Path, opened: Opened) -> None:
    counter = tmp_path / "w.jsonl"
    tools = await opened.open(
        _config(
            tmp_path,
            [stdio_server("shop", counter, effects={"lying_read": "NON_IDEMPOTENT_WRITE"})],
        )
    )
    assert sorted(tools) == [
        "shop.boom", "shop.charge", "shop.environment", "shop.lookup", "shop.lying_read",
        "shop.put", "shop.slow", "shop.writes",
    ]  # fmt: skip
    effects = {n: t.effect for n, t in tools.items()}
    assert effects["shop.lookup"] is ToolEffect.READ_ONLY
    assert effects["shop.put"] is ToolEffect.IDEMPOTENT_WRITE
    assert effects["shop.charge"] is ToolEffect.NON_IDEMPOTENT_WRITE  # no annotations
    assert effects["shop.lying_read"] is ToolEffect.NON_IDEMPOTENT_WRITE  # the override wins
    spec = tools["shop.put"].spec
    assert spec.description == "Store a value under a key (idempotent)."
    assert spec.parameters["required"] == ["key", "value"]
    assert set(spec.parameters["properties"]) == {"key", "value"}
    assert await tools["shop.lookup"]({"item": "x"}, _ctx()) == "item x: in stock"
    # The registry accepts the dotted names; profiles name them as they are.
    assert "shop.charge" in ToolRegistry(tools.values()).names()


async def test_untrusted_annotations_make_every_tool_a_write(
    tmp_path: Path, opened: Opened
) -> None:
    server = stdio_server("shop", tmp_path / "w.jsonl", trust_annotations=False,
                          effects={"lookup": "READ_ONLY"})  # fmt: skip
    tools = await opened.open(_config(tmp_path, [server]))
    assert tools["shop.lookup"].effect is ToolEffect.READ_ONLY  # the operator's override
    others = {t.effect for n, t in tools.items() if n != "shop.lookup"}
    assert others == {ToolEffect.NON_IDEMPOTENT_WRITE}


async def test_an_effects_entry_naming_no_tool_is_a_config_error(tmp_path: Path) -> None:
    server = stdio_server("shop", tmp_path / "w.jsonl", effects={"lokup": "READ_ONLY"})
    with pytest.raises(ConfigError, match="lokup"):
        await open_mcp_toolboxes(_config(tmp_path, [server]))


# --- calls over HTTP: _meta, validation, failures ----------------------------------------


async def test_writes_carry_the_idempotency_key_in_meta(
    tmp_path: Path, opened: Opened, http_server: HttpMcpServer
) -> None:
    tools = await opened.open(_config(tmp_path, [http_server.config("crm")]))
    assert await tools["crm.put"]({"key": "a", "value": "1"}, _ctx("idem-7")) == "stored a"
    out = await tools["crm.charge"]({"account": "acme", "amount": 5}, _ctx("idem-8"))
    assert out == "charged acme 5 (write #2)"
    assert [(w["tool"], w["key"]) for w in writes(http_server.counter)] == [
        ("put", "idem-7"), ("charge", "idem-8"),
    ]  # fmt: skip
    assert IDEMPOTENCY_META_KEY == "agentrt/idempotency_key"


async def test_bad_arguments_never_reach_the_server(
    tmp_path: Path, opened: Opened, http_server: HttpMcpServer
) -> None:
    charge = (await opened.open(_config(tmp_path, [http_server.config("crm")])))["crm.charge"]
    for args, needle in [
        ({"account": "a"}, "amount: field required"),
        ({"account": "a", "amount": 1, "memo": "x"}, "memo: unexpected argument"),
        ({"account": "a", "amount": "lots"}, "amount: expected integer"),
        ({"account": "a", "amount": True}, "amount: expected integer"),
    ]:
        with pytest.raises(ToolInputError, match=needle):
            await charge(args, _ctx())
    assert writes(http_server.counter) == []


async def test_an_error_result_is_a_tool_failure_and_fail_soft(
    tmp_path: Path, opened: Opened, http_server: HttpMcpServer, parts: WorkerResources
) -> None:
    tools = await opened.open(_config(tmp_path, [http_server.config("crm")]))
    with pytest.raises(ToolFailure, match="Error executing tool boom") as err:
        await tools["crm.boom"]({}, _ctx())
    assert err.value.reason == "error_result"
    content, is_error = await _execute(parts, tools, "crm.boom", {})
    assert is_error and content == "crm.boom failed: Error executing tool boom"


async def test_a_read_that_times_out_is_a_tool_failure(
    tmp_path: Path, opened: Opened, http_server: HttpMcpServer
) -> None:
    tools = await opened.open(_config(tmp_path, [http_server.config("crm", timeout_seconds=0.5)]))
    with pytest.raises(ToolFailure, match="did not answer") as err:
        await tools["crm.slow"]({"seconds": 5}, _ctx())
    assert err.value.reason == "timed out"
    assert await tools["crm.lookup"]({"item": "y"}, _ctx()) == "item y: in stock"


async def test_a_write_sent_and_unanswered_is_not_a_known_failure(
    tmp_path: Path, opened: Opened, http_server: HttpMcpServer
) -> None:
    """Sent, no answer: a plain error, so the fence marks the outcome unknown."""
    config = http_server.config(
        "crm", timeout_seconds=0.5, effects={"slow": "NON_IDEMPOTENT_WRITE"}
    )
    slow = (await opened.open(_config(tmp_path, [config])))["crm.slow"]
    with pytest.raises(RuntimeError, match="sent, no answer") as err:
        await slow({"seconds": 5}, _ctx())
    assert not isinstance(err.value, ToolFailure)


async def test_a_server_that_goes_down_gives_a_typed_failure_and_comes_back(
    tmp_path: Path, opened: Opened, http_server: HttpMcpServer, parts: WorkerResources
) -> None:
    tools = await opened.open(_config(tmp_path, [http_server.config("crm")]))
    assert await tools["crm.lookup"]({"item": "a"}, _ctx()) == "item a: in stock"
    http_server.stop()
    with pytest.raises(ToolFailure):
        await tools["crm.lookup"]({"item": "a"}, _ctx())
    content, is_error = await _execute(parts, tools, "crm.lookup", {"item": "a"})
    assert is_error and content.startswith("crm.lookup failed: ")
    with pytest.raises(ToolFailure, match="nothing was sent") as err:
        await tools["crm.charge"]({"account": "a", "amount": 1}, _ctx())
    assert err.value.reason == "unreachable"
    again = start_http_server(tmp_path, http_server.counter, port=http_server.port)
    try:
        assert await tools["crm.lookup"]({"item": "b"}, _ctx()) == "item b: in stock"
    finally:
        again.stop()
    assert writes(http_server.counter) == []


async def test_a_server_missing_at_start_is_a_config_error(tmp_path: Path) -> None:
    down = {"name": "gone", "transport": "http", "url": "http://127.0.0.1:9/mcp"}
    with pytest.raises(ConfigError, match="'gone': cannot list its tools at start"):
        await open_mcp_toolboxes(_config(tmp_path, [down]))
    missing = {"name": "nocmd", "transport": "stdio", "command": str(tmp_path / "no-such-binary")}
    with pytest.raises(ConfigError, match="'nocmd': cannot list its tools at start"):
        await open_mcp_toolboxes(_config(tmp_path, [missing]))


# --- through the write activity: a known failure is recorded, not left unknown ----------


async def test_a_fenced_write_to_a_down_server_is_recorded_not_unknown(
    tmp_path: Path, opened: Opened, http_server: HttpMcpServer, parts: WorkerResources
) -> None:
    tools = await opened.open(_config(tmp_path, [http_server.config("crm")]))
    http_server.stop()
    run_id = begin_run(parts)
    steps = ToolStepStore(parts.ctx)
    key = idempotency_key(run_id, "r1.1")
    fence = FenceRequest(run_id=run_id, call_id="r1.1", tool="crm.charge", token="tok")
    assert _sql.stamp(parts.ctx, fence, key) == FenceState.STAMPED
    acts = _write_activities(parts, tools)
    request = tool_request(run_id, "crm.charge", {"account": "a", "amount": 1}).model_copy(
        update={"effect": ToolEffect.NON_IDEMPOTENT_WRITE, "fence_token": "tok"}
    )
    outcome = await ActivityEnvironment().run(acts.execute, request)
    assert outcome.is_error
    stored = steps.result(key)
    assert stored is not None and stored.is_error and "nothing was sent" in stored.content
    # The fence is settled: a resolve after this says the write is done, not interrupted.
    verdict = _sql.resolve(parts.ctx, fence, key)
    assert verdict == FenceState.ALREADY_DONE
    assert writes(http_server.counter) == []


async def test_a_fenced_write_sent_and_lost_fails_as_outcome_unknown(
    tmp_path: Path, opened: Opened, http_server: HttpMcpServer, parts: WorkerResources
) -> None:
    config = http_server.config(
        "crm", timeout_seconds=0.5, effects={"slow": "NON_IDEMPOTENT_WRITE"}
    )
    tools = await opened.open(_config(tmp_path, [config]))
    run_id = begin_run(parts)
    key = idempotency_key(run_id, "r1.1")
    fence = FenceRequest(run_id=run_id, call_id="r1.1", tool="crm.slow", token="tok")
    _sql.stamp(parts.ctx, fence, key)
    acts = _write_activities(parts, tools)
    request = tool_request(run_id, "crm.slow", {"seconds": 5}).model_copy(
        update={"effect": ToolEffect.NON_IDEMPOTENT_WRITE, "fence_token": "tok"}
    )
    with pytest.raises(ApplicationError) as err:
        await ActivityEnvironment().run(acts.execute, request)
    assert err.value.type == ErrorType.WRITE_FAILED.value
    verdict = _sql.resolve(parts.ctx, fence, key)
    assert verdict == FenceState.INTERRUPTED


def _write_activities(parts: WorkerResources, tools: dict[str, Tool]) -> WriteActivities:
    assert parts.executor is not None
    return WriteActivities(
        ctx=parts.ctx, registry=ToolRegistry(tools.values()), executor=parts.executor
    )


async def _execute(
    parts: WorkerResources, tools: dict[str, Tool], name: str, args: dict[str, Any]
) -> tuple[str, bool]:
    """Through the real read activity: the content the model gets, and whether it is an error."""
    run_id = begin_run(parts)
    steps = ToolStepStore(parts.ctx)
    acts = ToolActivities(registry=ToolRegistry(tools.values()), steps=steps)
    outcome = await ActivityEnvironment().run(acts.execute, tool_request(run_id, name, args))
    stored = RunStore(parts.ctx).transcript(run_id)[-1]  # what the model will read
    assert stored.role == "tool" and stored.is_error is outcome.is_error
    return stored.content, outcome.is_error
