"""SSRF guard for requests the host makes itself (host-side fetches).

A fetch from the host runs with the user's network position, so it must not reach loopback,
private, link-local, carrier-grade NAT, multicast, unspecified, reserved or cloud-metadata
addresses. Hosts are judged after WHATWG parsing, which already folds every IPv4 spelling
(decimal `2130706433`, hex `0x7f.1`, octal `0177.0.0.1`, short `127.1`), trailing dots and
userinfo (`http://good@127.0.0.1`) into one canonical host; IPv6 forms that embed an IPv4 address
(mapped, compatible, 6to4, NAT64, Teredo) are judged by the address inside.

`check_url` judges a URL before any request (and again for every redirect target);
`check_ip` judges the address actually connected to, after DNS resolution, so a name that
resolves to a private address is caught too (DNS rebinding included, when called per connect).
"""

from __future__ import annotations

import ipaddress
import socket
from functools import lru_cache

from ada_url import URL

from host.gatekeeper.errors import GatekeeperError

FETCH_SCHEMES = frozenset({"http", "https"})

_METADATA_IPS = frozenset({
    ipaddress.ip_address("169.254.169.254"),  # AWS, GCP, Azure, OpenStack...
    ipaddress.ip_address("169.254.170.2"),  # AWS ECS task metadata
    ipaddress.ip_address("100.100.100.200"),  # Alibaba Cloud
    ipaddress.ip_address("192.0.0.192"),  # Oracle Cloud
    ipaddress.ip_address("fd00:ec2::254"),  # AWS IMDS over IPv6
})
_METADATA_NAMES = frozenset({"metadata", "metadata.google.internal", "instance-data", "metadata.azure.internal"})
_INTERNAL_SUFFIXES = ("localhost", "local", "internal", "intranet", "lan", "home.arpa", "corp", "localdomain")

_V4_RANGES: tuple[tuple[ipaddress.IPv4Network, str], ...] = tuple(
    (ipaddress.ip_network(net), label) for net, label in (
        ("0.0.0.0/8", "unspecified"),
        ("127.0.0.0/8", "loopback"),
        ("10.0.0.0/8", "private"),
        ("172.16.0.0/12", "private"),
        ("192.168.0.0/16", "private"),
        ("169.254.0.0/16", "link-local"),
        ("100.64.0.0/10", "carrier-grade NAT"),
        ("192.0.0.0/24", "IETF protocol assignment"),
        ("192.0.2.0/24", "documentation"),
        ("198.51.100.0/24", "documentation"),
        ("203.0.113.0/24", "documentation"),
        ("198.18.0.0/15", "benchmarking"),
        ("224.0.0.0/4", "multicast"),
        ("255.255.255.255/32", "broadcast"),
        ("240.0.0.0/4", "reserved"),
    ))
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")


class SsrfBlocked(GatekeeperError):
    """A host-side request would reach a forbidden address; `reason` says which kind."""

    code = "ssrf_blocked"

    def __init__(self, reason: str) -> None:
        self.reason = reason
        self.message = reason
        super().__init__(reason)


def _classify_v4(ip: ipaddress.IPv4Address) -> str | None:
    if ip in _METADATA_IPS:
        return "cloud metadata address"
    for network, label in _V4_RANGES:
        if ip in network:
            return f"{label} address"
    return None


def _classify_v6(ip: ipaddress.IPv6Address) -> str | None:
    if ip in _METADATA_IPS:
        return "cloud metadata address"
    embedded: ipaddress.IPv4Address | None = ip.ipv4_mapped
    kind = "IPv4-mapped"
    if embedded is None and ip.sixtofour is not None:
        embedded, kind = ip.sixtofour, "6to4"
    if embedded is None and ip.teredo is not None:
        embedded, kind = ip.teredo[1], "Teredo"
    if embedded is None and ip in _NAT64:
        embedded, kind = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF), "NAT64"
    if embedded is None and int(ip) >> 32 == 0 and int(ip) > 1:
        embedded, kind = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF), "IPv4-compatible"
    if embedded is not None:
        inner = _classify_v4(embedded)
        return f"{inner} ({kind} {embedded})" if inner else None
    if ip.is_unspecified:
        return "unspecified address"
    if ip.is_loopback:
        return "loopback address"
    if ip.is_link_local:
        return "link-local address"
    if ip.is_site_local or ip in ipaddress.ip_network("fc00::/7"):
        return "private address"
    if ip.is_multicast:
        return "multicast address"
    if ip in _NAT64_LOCAL:
        return "private address"
    if ip.is_reserved or ip in ipaddress.ip_network("2001:db8::/32"):
        return "reserved address"
    return None


def check_ip(address: str | ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """Why connecting to `address` is forbidden, or None when it is a public address.

    Call it with the address actually connected to (after resolution) on every connection,
    redirects included. A string that is not an IP address is refused.
    """
    try:
        ip = address if not isinstance(address, str) else ipaddress.ip_address(address.strip("[]").split("%")[0])
    except ValueError:
        return f"{address!r} is not an IP address"
    if isinstance(ip, ipaddress.IPv4Address):
        return _classify_v4(ip)
    return _classify_v6(ip)


def check_host(host: str) -> str | None:
    """Why a (WHATWG-normalised) host may not be fetched, or None. Names that always point inside
    the machine or the local network (localhost, *.local, *.internal, single labels, metadata
    names) are refused before any lookup."""
    host = host.lower().rstrip(".")
    if not host:
        return "empty host"
    # IP literals, IPv6 with or without brackets (callers other than the URL parser pass bare
    # addresses such as "::1", which must be judged as addresses, not as a one-label name).
    if host.startswith("["):
        return check_ip(host)
    try:
        ipaddress.ip_address(host.split("%")[0])
    except ValueError:
        pass
    else:
        return check_ip(host)
    if host in _METADATA_NAMES:
        return "cloud metadata host name"
    if any(host == s or host.endswith("." + s) for s in _INTERNAL_SUFFIXES):
        return f"internal host name {host!r}"
    if "." not in host:
        return f"single-label host name {host!r} resolves inside the local network"
    return None


@lru_cache(maxsize=4096)
def check_url(url: str) -> str | None:
    """Why a host-side fetch of `url` is forbidden before any connection, or None.

    Also call it for every redirect target. Only http and https are fetched, and URLs carrying
    credentials are refused (they serve only to confuse other URL parsers)."""
    try:
        parsed = URL(url)
    except ValueError:
        return "not a valid URL"
    scheme = parsed.protocol[:-1]
    if scheme not in FETCH_SCHEMES:
        return f"only http and https can be fetched, not {scheme}:"
    if parsed.username or parsed.password:
        return "URLs with credentials (user:password@) are not fetched"
    return check_host(parsed.hostname)


def resolve_and_check(host: str, port: int = 443) -> list[str]:
    """Resolve `host` and return its addresses, raising `SsrfBlocked` if the name or *any*
    address is forbidden (a name mixing public and private answers is refused as a whole).
    Connect only to the returned addresses, so the check and the connection see the same DNS."""
    reason = check_host(host)
    if reason is not None:
        raise SsrfBlocked(reason)
    try:
        infos = socket.getaddrinfo(host.rstrip("."), port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise SsrfBlocked(f"cannot resolve {host!r}: {exc}") from exc
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    for address in addresses:
        reason = check_ip(address)
        if reason is not None:
            raise SsrfBlocked(f"{host} resolves to {address}: {reason}")
    if not addresses:
        raise SsrfBlocked(f"{host!r} has no address")
    return addresses
