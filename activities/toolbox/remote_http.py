"""A remote agent's HTTP: every request (its card, its JSON-RPC calls) goes only to an
address checked at that moment, as a push does (core/outbound.py): the URL checked, its
name resolved and every address checked, the connection made to the checked address
with the original Host and TLS name. A private or loopback address is refused unless the
worker's AGENTRT_REMOTE_AGENTS_ALLOWED_NETWORKS / _HOSTS name it.

The card is fetched through the same transport and compared with the digest the
operator pinned: a card that changed is refused (CardRefused) until it is pinned again.
`RemoteConnection` holds one agent's client and card (activities/toolbox/remote_agent.py
calls its skills through it)."""

import json
from typing import Any

import httpx
from a2a.client import ClientConfig, ClientFactory
from a2a.client.card_resolver import parse_agent_card
from a2a.client.client import Client
from a2a.types import AgentCard

from agentrt.activities.ports import ToolFailure
from agentrt.activities.toolbox.remote_config import RemoteAgent, card_digest
from agentrt.core.outbound import (
    Policy,
    Refused,
    Resolver,
    check_url,
    pinned,
    resolve,
    system_resolver,
)

CARD_PATH = ".well-known/agent-card.json"
MAX_CARD_BYTES = 1_000_000


class CardRefused(Exception):
    """The card is not the one pinned (or none is pinned); str() says both digests."""


class NotSent(Exception):
    """The request was never sent: refused by the outbound rules, or no connection made."""


class PinnedTransport(httpx.AsyncBaseTransport):
    """An httpx transport that sends each request to a checked address of its host."""

    def __init__(self, policy: Policy, resolver: Resolver = system_resolver) -> None:
        self._policy = policy
        self._resolver = resolver
        self._inner = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        try:
            target = check_url(str(request.url), self._policy)
            addresses = await resolve(target, self._policy, self._resolver)
        except (Refused, ConnectionError) as exc:
            raise NotSent(f"remote agent URL refused: {exc}") from None
        for n, ip in enumerate(addresses):
            url, headers, extensions = pinned(target, ip)
            request.url = url
            request.headers["Host"] = headers["Host"]
            request.extensions = {**request.extensions, **extensions}
            try:
                return await self._inner.handle_async_request(request)
            except httpx.ConnectError:
                if n + 1 == len(addresses):
                    raise
        raise NotSent("the remote agent's host has no address")

    async def aclose(self) -> None:
        await self._inner.aclose()


def http_client(agent: RemoteAgent, token: str | None, policy: Policy) -> httpx.AsyncClient:
    """The client every request to `agent` goes through; follows no redirect (a redirect
    could lead past the checks)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.AsyncClient(
        transport=PinnedTransport(policy),
        headers=headers,
        timeout=httpx.Timeout(agent.timeout_seconds),
        follow_redirects=False,
    )


def canonical(data: Any) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


async def fetch_card(agent: RemoteAgent, http: httpx.AsyncClient) -> tuple[AgentCard, str]:
    """The agent's card and its digest; CardRefused when it is not the pinned one.
    NotSent / httpx errors when it cannot be fetched (the agent is down)."""
    reply = await http.get(agent.url.rstrip("/") + "/" + CARD_PATH)
    reply.raise_for_status()
    if len(reply.content) > MAX_CARD_BYTES:
        raise CardRefused(f"remote agent {agent.name!r}: its card is over {MAX_CARD_BYTES} bytes")
    data = reply.json()
    digest = card_digest(canonical(data))
    if agent.pinned_card_digest is None:
        raise CardRefused(
            f"remote agent {agent.name!r}: no card is pinned; review the card at "
            f"{agent.url} and pin it: pinned_card_digest: {digest}"
        )
    if digest != agent.pinned_card_digest:
        raise CardRefused(
            f"remote agent {agent.name!r}: its card changed since it was pinned "
            f"(pinned {agent.pinned_card_digest}, now {digest}); refused until an operator "
            "reviews it and pins the new digest"
        )
    return parse_agent_card(data), digest


class RemoteConnection:
    """One remote agent: its HTTP client (every address checked) and its card, checked
    against its pin once per worker process (at start, or at the first use) and again
    after a send the remote refused (`recheck`): a call is one request."""

    def __init__(self, agent: RemoteAgent, token: str | None, policy: Policy) -> None:
        self.agent = agent
        self.name = agent.name
        self._http = http_client(agent, token, policy)
        self._clients: dict[bool, Client] = {}  # by streaming, on the card as checked last

    async def card(self) -> Any:
        """The pinned card, fetched and checked now. ToolFailure (nothing sent) when it
        changed or the agent cannot be reached; either forgets the card checked before."""
        self._clients = {}
        try:
            card, _ = await fetch_card(self.agent, self._http)
        except CardRefused as exc:
            raise ToolFailure(str(exc), reason="card_changed") from None
        except (NotSent, httpx.HTTPError, ValueError) as exc:
            why = str(exc) if isinstance(exc, NotSent) else type(exc).__name__  # no URL, no token
            raise ToolFailure(
                f"the remote agent {self.name!r} cannot be reached ({why})", reason="remote_down"
            ) from None
        # a2a-sdk clients on the card as pinned (never closed: it would close ours): one
        # that streams a send (SSE, where the card says the agent streams), one that does not.
        for streaming in (False, True):
            config = ClientConfig(streaming=streaming, httpx_client=self._http)
            self._clients[streaming] = ClientFactory(config).create(card)
        return card

    async def client(self, streaming: bool = False) -> Client:
        """The client on the card checked last; the card is fetched only if none was."""
        if not self._clients:
            await self.card()
        return self._clients[streaming]

    async def recheck(self) -> None:
        """After a send the remote refused (it may have changed): the card fetched again;
        ToolFailure `card_changed` when it is no longer the pinned one."""
        await self.card()

    async def close(self) -> None:
        await self._http.aclose()
