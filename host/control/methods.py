"""Control methods every host serves: host status and link diagnostics.

The subsystems (`SUBSYSTEM_METHODS`: browser tools, gatekeeper, engine, UI ops, built-ins, MCP)
register their own methods on the same server; every tool call goes through the gatekeeper
there, never through these.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from typing import Any, Annotated

import msgspec

from protocol.errors import ErrorCode
from protocol.messages import BrowserCall, DiagCall
from host.control.errors import ControlError
from host.control.params import parse_params as _params
from host.control.server import ControlConnection, ControlServer


def _browser(conn: "ControlConnection"):
    host = conn.server.host
    endpoint = getattr(host, "endpoint", None)
    if endpoint is None or not endpoint.is_open or getattr(host, "session", None) is None:
        raise ControlError(ErrorCode.NOT_READY, "no browser is connected to this host: open the browser with the "
                          "Tabwarden extension (or start one with `tabwarden launch`)")
    return endpoint


class _WaitReady(msgspec.Struct, forbid_unknown_fields=True):
    timeout: Annotated[float, msgspec.Meta(ge=0, le=600)] = 10.0


class _Payload(msgspec.Struct, forbid_unknown_fields=True):
    size: Annotated[int, msgspec.Meta(ge=0, le=60 * 1024 * 1024)]


class _Echo(msgspec.Struct, forbid_unknown_fields=True):
    data: Any = None


class _RoundTrip(msgspec.Struct, forbid_unknown_fields=True):
    n: Annotated[int, msgspec.Meta(ge=1, le=10_000)] = 100
    tab_id: int | None = None  # None: ping the service worker only


def payload_text(size: int) -> str:
    """A deterministic ASCII payload of `size` characters that does not compress to nothing."""
    block = hashlib.sha256(str(size).encode()).hexdigest() * 64
    return (block * (size // len(block) + 1))[:size]


async def host_info(params: dict[str, Any], conn: "ControlConnection") -> dict[str, Any]:
    host = conn.server.host
    session = getattr(host, "session", None)
    endpoint = getattr(host, "endpoint", None)
    return {
        "pid": __import__("os").getpid(),
        "extensionId": getattr(host, "extension_id", None),
        "connected": bool(endpoint and endpoint.is_open),
        "browserSessionId": session.browser_session_id if session else None,
        "extensionVersion": session.extension_version if session else None,
        "browser": session.browser if session else None,
    }


async def wait_ready(params: dict[str, Any], conn: "ControlConnection") -> dict[str, Any]:
    p = _params(_WaitReady, params)
    try:
        await asyncio.wait_for(conn.server.host.ready.wait(), p.timeout)
    except asyncio.TimeoutError:
        raise ControlError(ErrorCode.TIMEOUT, f"no browser handshake within {p.timeout:g} s") from None
    return await host_info({}, conn)


async def diag_payload(params: dict[str, Any], conn: "ControlConnection") -> dict[str, Any]:
    """Send `size` characters to the extension and compare its digest with ours."""
    p = _params(_Payload, params)
    endpoint = _browser(conn)
    data = payload_text(p.size)
    started = time.perf_counter()
    received = await endpoint.request(lambda i: DiagCall(id=i, op="digest", data=data), timeout=60)
    elapsed = time.perf_counter() - started
    expected = hashlib.sha256(data.encode()).hexdigest()
    return {
        "sentLength": len(data),
        "sentSha256": expected,
        "received": received,
        "match": isinstance(received, dict) and received.get("sha256") == expected and received.get("length") == len(data),
        "seconds": elapsed,
    }


async def diag_echo(params: dict[str, Any], conn: "ControlConnection") -> Any:
    p = _params(_Echo, params)
    return await _browser(conn).request(lambda i: DiagCall(id=i, op="echo", data=p.data), timeout=30)


async def diag_roundtrip(params: dict[str, Any], conn: "ControlConnection") -> dict[str, Any]:
    """Time `n` pings from the host to the service worker (or through a tab's content script)."""
    p = _params(_RoundTrip, params)
    endpoint = _browser(conn)
    samples = []
    for _ in range(p.n):
        started = time.perf_counter()
        if p.tab_id is None:
            await endpoint.ping(timeout=5)
        else:
            await endpoint.request(lambda i: DiagCall(id=i, op="content_ping", data={"tabId": p.tab_id}), timeout=10)
        samples.append(time.perf_counter() - started)
    return {"samples": samples}


async def browser_tabs(params: dict[str, Any], conn: "ControlConnection") -> Any:
    """The open tabs (read-only)."""
    return await _browser(conn).request(lambda i: BrowserCall(id=i, api="tabs.query", args=[{}]), timeout=10)


def _topics(params: dict[str, Any]) -> list[str]:
    from host.control.topics import MAX_TOPICS, valid_pattern

    topics = params.get("topics", [])
    unknown = sorted(set(params) - {"topics"})
    if unknown:
        raise ControlError(ErrorCode.INVALID_MESSAGE, f"unknown parameter {unknown[0]!r}; expected `topics`")
    if not isinstance(topics, list) or not all(isinstance(t, str) for t in topics):
        raise ControlError(ErrorCode.INVALID_MESSAGE, "topics must be a list of strings")
    bad = [t for t in topics if not valid_pattern(t)]
    if bad:
        raise ControlError(ErrorCode.INVALID_MESSAGE, f"not a topic: {bad[0]!r} (a dotted name, `family.*` or `*`)")
    if len(topics) > MAX_TOPICS:
        raise ControlError(ErrorCode.INVALID_MESSAGE, f"at most {MAX_TOPICS} topics")
    return topics


async def subscribe(params: dict[str, Any], conn: "ControlConnection") -> list[str]:
    """Receive events on `topics` (exact names, `family.*` or `*`); returns every subscription."""
    from host.control.topics import MAX_TOPICS

    topics = _topics(params)
    if len(conn.topics | set(topics)) > MAX_TOPICS:
        raise ControlError(ErrorCode.OVERLOADED, f"a client may hold at most {MAX_TOPICS} subscriptions")
    conn.topics.update(topics)
    return sorted(conn.topics)


async def unsubscribe(params: dict[str, Any], conn: "ControlConnection") -> list[str]:
    """Stop events on `topics` (as subscribed); returns the remaining subscriptions."""
    conn.topics.difference_update(_topics(params))
    return sorted(conn.topics)


async def list_methods(params: dict[str, Any], conn: "ControlConnection") -> list[str]:
    """Every control method this host serves (what the REPL completes and checks for)."""
    return sorted(conn.server.methods)


async def control_status(params: dict[str, Any], conn: "ControlConnection") -> dict[str, Any]:
    """The attached clients and the refused connections so far, by reason code."""
    server = conn.server
    return {"transport": server.kind, "address": server.address,
            "clients": [c.describe() for c in sorted(server.connections, key=lambda c: c.connected_at)],
            "refused": server.refusals.counts()}


# Subsystems that serve their own control methods: each module defines `register(server)`.
SUBSYSTEM_METHODS = (
    "host.browser.control_methods",
    "host.calls.control_methods",
    "host.gatekeeper.control_methods",
    "host.engine.control_methods",
    "host.ui.control_methods",
    "host.builtins.control_methods",
    "host.mcp.control_methods",
    "host.plugins.control_methods",
)


def register_subsystems(server: ControlServer) -> None:
    """Let every subsystem that exists register its methods."""
    import importlib

    for name in SUBSYSTEM_METHODS:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name and name.startswith(exc.name):
                continue  # that subsystem is not built (yet)
            raise
        module.register(server)


def register_builtin(server: ControlServer) -> None:
    """Register the methods above and those of every subsystem."""
    server.register("host.info", host_info)
    server.register("host.wait_ready", wait_ready)
    server.register("host.subscribe", subscribe)
    server.register("host.unsubscribe", unsubscribe)
    server.register("host.methods", list_methods)
    server.register("control.status", control_status)
    server.register("diag.payload", diag_payload)
    server.register("diag.echo", diag_echo)
    server.register("diag.roundtrip", diag_roundtrip)
    server.register("browser.tabs", browser_tabs)
    register_subsystems(server)


def control_server(host: Any, hello_timeout: float = 5.0, transport_kind: str | None = None) -> ControlServer:
    """A control server for `host` serving the methods above and those of every subsystem (it
    still has to be started)."""
    server = ControlServer(host, hello_timeout=hello_timeout, transport_kind=transport_kind)
    register_builtin(server)
    return server
