"""Where an outbound request may go: an A2A push (api/a2a/delivery.py) or a call to a
remote agent (activities/toolbox/remote_http.py). A URL is checked twice: statically when
it is registered (scheme, no userinfo, a host the HTTP client accepts, a literal address in
any numeric form that getaddrinfo would accept), and at every delivery, where its name is
resolved (off the event loop) and every resolved address is checked; the request then
connects to the checked address. An address is refused unless it is globally routable
unicast, or an allow-list setting names its network (or its host name)."""

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

IP = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
# (host, port) -> the addresses the name resolves to; loop.getaddrinfo by default.
Resolver = Callable[[str, int], Awaitable[list[str]]]

_SHARED = ipaddress.ip_network("100.64.0.0/10")  # CGNAT: not private, not global either
_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
# Names refused before any lookup: the machine itself, and cloud metadata services (a
# lookup of them would leave the machine, and their address is refused anyway).
_NAMES = ("localhost", "metadata.google.internal", "metadata.goog", "instance-data")
_NUMERIC = set("0123456789abcdefABCDEFxX.")
MAX_URL = 2048


class Refused(Exception):
    """A target this process will not send to; str() says why, without the address."""


@dataclass(frozen=True)
class Policy:
    networks: tuple[Network, ...] = ()
    hosts: frozenset[str] = frozenset()

    @classmethod
    def parse(cls, networks: str, hosts: str) -> "Policy":
        """Comma-separated CIDRs (or addresses) and host names; ValueError when malformed."""
        nets = tuple(ipaddress.ip_network(n.strip(), strict=False) for n in _items(networks))
        return cls(nets, frozenset(_name(h) for h in _items(hosts)))

    def names(self, host: str) -> bool:
        return _name(host) in self.hosts

    def allows(self, ip: IP) -> bool:
        return any(ip.version == n.version and ip in n for n in self.networks)


@dataclass(frozen=True)
class Target:
    url: httpx.URL
    host: str  # ASCII (IDNA) host, no brackets, no trailing dot
    port: int


def _items(raw: str) -> Iterable[str]:
    return (p.strip() for p in raw.split(",") if p.strip())


def _name(host: str) -> str:
    return host.strip().rstrip(".").lower()


def _embedded(ip: IP) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (mapped, 6to4, Teredo client, NAT64)."""
    if not isinstance(ip, ipaddress.IPv6Address):
        return None
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if any(ip in n for n in _NAT64):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def _kind(ip: IP) -> str | None:
    """Why an address is no target, or None for a global unicast address."""
    checks = (
        ("unspecified", ip.is_unspecified),
        ("loopback", ip.is_loopback),
        ("link-local", ip.is_link_local),
        ("shared (CGNAT)", isinstance(ip, ipaddress.IPv4Address) and ip in _SHARED),
        ("multicast", ip.is_multicast),
        ("private", ip.is_private),
        ("reserved", ip.is_reserved),
        ("site-local", isinstance(ip, ipaddress.IPv6Address) and ip.is_site_local),
        ("not globally routable", not ip.is_global),
    )
    return next((name for name, hit in checks if hit), None)


def refusal(ip: IP, policy: Policy) -> str | None:
    """Why this address is refused under the policy, or None when it may be sent to."""
    inner = _embedded(ip)
    if policy.allows(ip) or (inner is not None and policy.allows(inner)):
        return None
    for candidate in (ip, inner):
        if candidate is not None and (kind := _kind(candidate)) is not None:
            return f"the URL targets a {kind} address"
    if inner is not None:
        return "the URL targets an address with an embedded IPv4 address"
    return None


def literal(host: str) -> IP | None:
    """The address a host names literally, in any form the resolver takes as a number:
    dotted, short (127.1), decimal (2130706433), hex or octal; IPv6 with or without zone."""
    bare = host.rstrip(".")
    try:
        return ipaddress.ip_address(bare.split("%", 1)[0])
    except ValueError:
        pass
    if bare and set(bare) <= _NUMERIC:
        try:
            return ipaddress.IPv4Address(socket.inet_aton(bare))
        except OSError:
            return None
    return None


def check_url(url: str, policy: Policy) -> Target:
    """The static check, at registration and again before every delivery."""
    if len(url) > MAX_URL or any(ord(c) < 0x21 or ord(c) == 0x7F for c in url):
        raise Refused("the URL is too long or holds spaces or control characters")
    try:
        parts = urlsplit(url)
        _ = parts.port
        parsed = httpx.URL(url)
        _ = parsed.host  # decodes (and so checks) IDNA labels, which httpx.URL() does not
        httpx.Request("POST", parsed)
        host = parsed.raw_host.decode("ascii").strip("[]")
    except Exception:  # urllib and httpx (IDNA) refuse in many ways: all are "does not parse"
        raise Refused("the URL does not parse") from None
    if parts.scheme not in ("http", "https") or parsed.scheme != parts.scheme:
        raise Refused("the URL must be http or https")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise Refused("the URL may not carry credentials")
    if not host:
        raise Refused("the URL has no host")
    name = _name(host)
    ip = literal(host)
    if ip is not None:
        reason = refusal(ip, policy)
        if reason is not None:
            raise Refused(reason)
    elif not policy.names(name) and any(name == n or name.endswith("." + n) for n in _NAMES):
        raise Refused("the URL names this machine or a metadata service")
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    return Target(parsed, name if ip is None else str(ip), port)


async def system_resolver(host: str, port: int) -> list[str]:
    infos = await asyncio.get_running_loop().getaddrinfo(
        host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
    )
    return [str(info[4][0]) for info in infos]


async def resolve(target: Target, policy: Policy, resolver: Resolver) -> list[IP]:
    """The addresses to connect to, in the resolver's order: every address the host
    resolves to must pass (one bad answer refuses the lot, so a rebinding name cannot
    slip one through)."""
    if (ip := literal(target.host)) is not None:
        found: list[IP] = [ip]
    else:
        try:
            answers = await resolver(target.host, target.port)
        except OSError:
            raise ConnectionError("the host does not resolve") from None
        found = [ipaddress.ip_address(a.split("%", 1)[0]) for a in answers]
    if not found:
        raise ConnectionError("the host does not resolve")
    if not policy.names(target.host):
        for ip in found:
            reason = refusal(ip, policy)
            if reason is not None:
                raise Refused(reason)
    return list(dict.fromkeys(found))


def pinned(target: Target, ip: IP) -> tuple[httpx.URL, dict[str, str], dict[str, str]]:
    """The URL with the checked address in place of the name, the Host header of the
    original URL, and (https) the name to send as SNI and verify the certificate against."""
    url = target.url.copy_with(host=str(ip))
    default = 443 if target.url.scheme == "https" else 80
    host = f"[{target.host}]" if ":" in target.host else target.host
    header = host if target.port == default else f"{host}:{target.port}"
    extensions = {"sni_hostname": target.host} if target.url.scheme == "https" else {}
    return url, {"Host": header}, extensions
