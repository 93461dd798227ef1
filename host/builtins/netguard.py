"""The connect-time half of the SSRF guard: an httpx transport that connects only to addresses
the gatekeeper's `resolve_and_check` returned (every connection, redirects included), and checks
the peer it actually reached.

The URL-time half (`check_url`) runs before each request; this one catches names that resolve
to private addresses, DNS rebinding between check and connect, and IP literals in any spelling.
No proxy is ever used: a proxy would make the address check meaningless.

The resolver is a seam. Tests (and only tests: it needs TABWARDEN_TEST_HOOKS=1) may map a few
names to addresses with TABWARDEN_TEST_FETCH_HOSTS, a JSON object such as
`{"pages.test": {"address": "127.0.0.1", "public": true}}`: a `public` mapping stands for a
public server running on this machine; any other mapping is judged like a real answer, so it
is refused when private.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import os
import ssl
from collections.abc import AsyncIterator
from typing import Any, Protocol

import httpcore
import httpx

from host.gatekeeper.ssrf import SsrfBlocked, check_ip, resolve_and_check

log = logging.getLogger("tabwarden.builtins")

# The one switch for every test hook of the host (the browser's control methods read it too).
TEST_HOOKS_ENV = "TABWARDEN_TEST_HOOKS"
TEST_HOSTS_ENV = "TABWARDEN_TEST_FETCH_HOSTS"


class Resolver(Protocol):
    def resolve(self, host: str, port: int) -> list[str]:
        """The addresses `host` may be reached at; raises SsrfBlocked when it may not be."""
        ...


def _literal(host: str) -> str | None:
    try:
        return str(ipaddress.ip_address(host.strip("[]")))
    except ValueError:
        return None


class GuardedResolver:
    """The default: IP literals are judged as they are, names through `resolve_and_check`."""

    def resolve(self, host: str, port: int) -> list[str]:
        """Public addresses of `host`, or SsrfBlocked."""
        literal = _literal(host)
        if literal is not None:
            reason = check_ip(literal)
            if reason is not None:
                raise SsrfBlocked(f"{host}: {reason}")
            return [literal]
        return resolve_and_check(host, port)


class MappedResolver:
    """Test resolver: mapped names first (see the module docstring), everything else as usual."""

    def __init__(self, mapping: dict[str, tuple[str, bool]], fallback: Resolver | None = None):
        self.mapping = {name.lower().rstrip("."): value for name, value in mapping.items()}
        self.fallback = fallback or GuardedResolver()

    def resolve(self, host: str, port: int) -> list[str]:
        """The mapped address (checked unless marked public), else the fallback's answer."""
        found = self.mapping.get(host.lower().rstrip("."))
        if found is None:
            return self.fallback.resolve(host, port)
        address, public = found
        reason = None if public else check_ip(address)
        if reason is not None:
            raise SsrfBlocked(f"{host} resolves to {address}: {reason}")
        return [address]


def resolver_from_env(environ: dict[str, str] | None = None) -> Resolver:
    """The guarded resolver; with TABWARDEN_TEST_HOOKS=1 and TABWARDEN_TEST_FETCH_HOSTS set, a
    mapped one for tests. A malformed mapping is ignored (and logged): the default stays."""
    env = os.environ if environ is None else environ
    raw = env.get(TEST_HOSTS_ENV)
    if env.get(TEST_HOOKS_ENV) != "1" or not raw:
        return GuardedResolver()
    try:
        data = json.loads(raw)
        mapping = {str(name): (str(_literal(v["address"]) or ""), v.get("public") is True) for name, v in data.items()}
        if any(not address for address, _ in mapping.values()):
            raise ValueError("every address must be an IP address")
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        log.warning("ignoring %s: %s", TEST_HOSTS_ENV, exc)
        return GuardedResolver()
    log.warning("test hook: host-side fetches resolve %s from %s", ", ".join(sorted(mapping)), TEST_HOSTS_ENV)
    return MappedResolver(mapping)


class GuardedBackend(httpcore.AsyncNetworkBackend):
    """Connects to checked addresses only, and checks the peer it reached."""

    def __init__(self, resolver: Resolver, inner: httpcore.AsyncNetworkBackend | None = None):
        self.resolver = resolver
        self.inner = inner or httpcore.AnyIOBackend()

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                          socket_options: Any = None) -> httpcore.AsyncNetworkStream:
        addresses = await asyncio.to_thread(self.resolver.resolve, host, port)
        last: Exception | None = None
        for address in addresses:
            try:
                stream = await self.inner.connect_tcp(address, port, timeout=timeout, local_address=local_address,
                                                      socket_options=socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last = exc
                continue
            peer = stream.get_extra_info("server_addr")
            reached = _literal(str(peer[0])) if peer else None
            if reached != _literal(address):
                await stream.aclose()
                raise SsrfBlocked(f"{host}: connected to {reached or 'an unknown peer'}, not the checked {address}")
            return stream
        raise last or httpcore.ConnectError(f"{host} has no address to connect to")

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Any = None) -> httpcore.AsyncNetworkStream:
        raise SsrfBlocked("host-side fetches never use Unix sockets")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


# httpcore has no common base for its errors; these are all of them but timeouts.
_CORE_ERRORS = (httpcore.NetworkError, httpcore.ProtocolError, httpcore.UnsupportedProtocol, httpcore.ProxyError,
                httpcore.ConnectionNotAvailable)


class _Body(httpx.AsyncByteStream):
    def __init__(self, stream: Any):
        self._stream = stream

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._stream:
                yield chunk
        except httpcore.TimeoutException as exc:
            raise httpx.ReadTimeout(str(exc)) from exc
        except _CORE_ERRORS as exc:
            raise httpx.ReadError(str(exc)) from exc

    async def aclose(self) -> None:
        if hasattr(self._stream, "aclose"):
            await self._stream.aclose()


class GuardedTransport(httpx.AsyncBaseTransport):
    """An httpx transport over an httpcore pool whose every connection goes through the guard."""

    def __init__(self, resolver: Resolver | None = None, *, verify: ssl.SSLContext | None = None):
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=verify or httpx.create_ssl_context(), max_connections=4, keepalive_expiry=5.0,
            network_backend=GuardedBackend(resolver or GuardedResolver()))

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        core = httpcore.Request(
            method=request.method,
            url=httpcore.URL(scheme=request.url.raw_scheme, host=request.url.raw_host, port=request.url.port,
                             target=request.url.raw_path),
            headers=request.headers.raw, content=request.stream, extensions=request.extensions)
        try:
            answer = await self._pool.handle_async_request(core)
        except httpcore.TimeoutException as exc:
            raise httpx.TimeoutException(str(exc), request=request) from exc
        except _CORE_ERRORS as exc:
            raise httpx.TransportError(str(exc), request=request) from exc
        return httpx.Response(status_code=answer.status, headers=answer.headers, stream=_Body(answer.stream),
                              extensions=answer.extensions)

    async def aclose(self) -> None:
        await self._pool.aclose()
