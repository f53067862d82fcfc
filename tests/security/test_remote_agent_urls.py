"""Issue 43 item 2: the push-URL rules (core/outbound.py) apply to remote agents. Every
request to a remote agent (its card, its JSON-RPC calls) goes only to an address checked
at that moment: loopback, private, link-local (cloud metadata) and numeric disguises of
them are refused unless AGENTRT_REMOTE_AGENTS_ALLOWED_NETWORKS / _HOSTS name them; a
name that resolves to such an address is refused; the connection goes to the address
checked (never resolved again); no redirect is followed; the token is never in an error."""

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import pytest

from agentrt.activities.ports import ToolFailure
from agentrt.activities.toolbox.remote_config import RemoteAgent
from agentrt.activities.toolbox.remote_http import RemoteConnection
from agentrt.contracts.errors import ConfigError
from agentrt.core.outbound import Policy

TOKEN = "secret-token-never-shown-93d1"


@dataclass
class Listener:
    port: int
    hosts: list[str] = field(default_factory=list)  # the Host header of each request


@asynccontextmanager
async def listener(reply: bytes) -> AsyncIterator[Listener]:
    """A loopback HTTP server that records each request's Host header and answers `reply`."""
    seen = Listener(0)

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = (await reader.readuntil(b"\r\n\r\n")).decode()
        lines = head.split("\r\n")
        hosts = [ln.split(":", 1)[1] for ln in lines if ln.lower().startswith("host:")]
        seen.hosts.extend(h.strip() for h in hosts)
        writer.write(reply)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    seen.port = server.sockets[0].getsockname()[1]
    async with server:
        yield seen


def _agent(url: str) -> RemoteAgent:
    return RemoteAgent(name="partner", url=url, pinned_card_digest="sha256:" + "0" * 64)


async def _card(url: str, policy: Policy) -> str:
    conn = RemoteConnection(_agent(url), TOKEN, policy)
    try:
        with pytest.raises(ToolFailure) as refused:
            await conn.card()
    finally:
        await conn.close()
    assert TOKEN not in str(refused.value)
    return str(refused.value)


@pytest.mark.parametrize(
    "host",
    ["127.0.0.1", "localhost", "2130706433", "127.1", "0x7f000001", "[::1]", "[::ffff:127.0.0.1]",
     "10.0.0.5", "169.254.169.254", "metadata.google.internal", "192.168.1.1", "100.64.0.1"],
)  # fmt: skip
async def test_a_remote_agent_on_a_private_address_is_refused_before_any_request(
    host: str,
) -> None:
    async with listener(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}") as seen:
        url = f"http://{host}:{seen.port}/"
        reason = await _card(url, Policy())
        assert "cannot be reached" in reason and "refused" in reason, reason
        assert seen.hosts == []  # nothing reached the loopback server


async def test_a_name_resolving_to_a_private_address_is_refused() -> None:
    """A rebinding name: one private answer refuses the lot."""
    from agentrt.activities.toolbox import remote_http

    async def rebinding(host: str, port: int) -> list[str]:
        return ["93.184.216.34", "10.1.2.3"]

    transport = remote_http.PinnedTransport(Policy(), resolver=rebinding)
    import httpx

    async with httpx.AsyncClient(transport=transport) as http:
        with pytest.raises(remote_http.NotSent, match="private address"):
            await http.get("http://partner.example/.well-known/agent-card.json")


async def test_the_connection_goes_to_the_checked_address_with_the_original_host() -> None:
    import httpx

    from agentrt.activities.toolbox import remote_http

    async with listener(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}") as seen:
        asked: list[str] = []

        async def resolver(host: str, port: int) -> list[str]:
            asked.append(host)
            return ["127.0.0.1"]

        policy = Policy.parse("127.0.0.0/8", "")
        transport = remote_http.PinnedTransport(policy, resolver=resolver)
        async with httpx.AsyncClient(transport=transport) as http:
            reply = await http.get(f"http://partner.example:{seen.port}/x")
        assert reply.status_code == 200
        assert asked == ["partner.example"]  # resolved once, by us
        assert seen.hosts == [f"partner.example:{seen.port}"]


async def test_no_redirect_is_followed() -> None:
    moved = b"HTTP/1.1 302 Found\r\nLocation: http://169.254.169.254/\r\nContent-Length: 0\r\n\r\n"
    async with listener(moved) as seen:
        reason = await _card(f"http://127.0.0.1:{seen.port}/", Policy.parse("127.0.0.0/8", ""))
        assert "cannot be reached" in reason
        assert len(seen.hosts) == 1  # the card's request only: the redirect was not followed


def test_a_token_variable_that_is_not_set_is_named_never_shown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    agent = RemoteAgent(name="partner", url="https://partner.example/", token_from_env="PT_X")
    monkeypatch.delenv("PT_X", raising=False)
    with pytest.raises(ConfigError, match="PT_X is not set"):
        agent.token()
    monkeypatch.setenv("PT_X", TOKEN)
    assert agent.token() == TOKEN
    assert TOKEN not in repr(agent) and TOKEN not in agent.model_dump_json()


def test_a_remote_agent_url_must_be_http() -> None:
    with pytest.raises(ValueError, match="url"):
        RemoteAgent(name="partner", url="file:///etc/passwd")
