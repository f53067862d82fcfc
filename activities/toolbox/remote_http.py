"""A remote agent's HTTP: every request (its card, its JSON-RPC calls) goes only to an
address checked at that moment, as a push does (core/outbound.py): the URL checked, its
name resolved and every address checked, the connection made to the checked address
with the original Host and TLS name. A private or loopback address is refused unless the
worker's AGENTRT_REMOTE_AGENTS_ALLOWED_NETWORKS / _HOSTS name it.

The card is fetched through the same transport and compared with the digest the
operator pinned: a card that changed is refused (CardRefused) until it is pinned again."""

import json
from typing import Any

import httpx
from a2a.client.card_resolver import parse_agent_card
from a2a.types import AgentCard

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
