"""Control-socket methods for the browser tools, so tests and the REPL can drive them on the
running host. Every `tools.call` takes the host's one authorisation path, and so the gatekeeper.

    tools.call    {tool, params?, tab_id?, thread_id?, policy?, ask?}  -> ToolResult (with `ask`, a call that
                  needs an approval waits for `tools.answer` and this answers at once: approval_required
                  with details {waiting: true, approvalId, request}; host/calls/control_methods.py)
    tools.list    {}                                             -> tool declarations
    browser.refs  {tab_id}                                       -> the host-side ref map of a tab
    browser.bind_target {thread_id, tab_id}                      -> capture a thread's tab (a submission)
    browser.routes {thread_id}                                   -> a thread's routes
    browser.end_turn {thread_id}                                 -> forget driven tabs and floating locks (and their guard)
    browser.guard {}                                             -> the navigation guard: guarded tabs, rules, timings
    browser.site_access {origin?}                                -> the sites the extension may script (and whether `origin` is one)
    browser.grant_site {origin}                                  -> grant the extension `origin` where no side panel can (headless
                                                                    launch): its copy's manifest gains the site and it reloads
    browser.revoke_site {origin}                                 -> take site access to `origin` back (a grant made at launch or
                                                                    by grant_site: from the copy's manifest, with a reload)
    browser.resume {thread_id}                                   -> lift a manual-takeover pause
    browser.paused {}                                            -> current pauses
    browser.deep_refs {tab_id}                                   -> the latest deep read of a tab
    browser.attach_file {thread_id, name, data_base64, mime?}    -> a user-provided attachment (the only files a page upload may use)
    browser.debugger {tab_id}                                    -> the debugger state of a tab (epoch, sessions)

With TABWARDEN_TEST_HOOKS=1 in the host's environment, `test.content_call` also sends a raw
content call (no gatekeeper, no validation), `test.cdp` one CDP command through the bridge client
(chrome.debugger's domain allowlist still applies), and `test.landing` resolves where an L2 write
would land, timed, without judging or sending it: only for testing the executor and the bridge.
"""

from __future__ import annotations

import asyncio
import logging
import os
import weakref
from typing import TYPE_CHECKING, Annotated, Any

import msgspec

from protocol.errors import ErrorCode
from protocol.messages import MAX_URL_CHARS, BrowserEvent

from host.browser.events import handle_event
from host.browser.gateway import BrowserGateway
from host.builtins.netguard import TEST_HOOKS_ENV
from host.calls.authorize import Authorizer
from host.calls.direct import call_directly
from host.calls.held import Held, held_for
from host.calls.router import Router
from host.tools.schema import describe
from host.control.params import parse_params as _params

if TYPE_CHECKING:
    from host.control.server import ControlConnection, ControlServer

log = logging.getLogger("tabwarden.browser")

ThreadId = Annotated[str, msgspec.Meta(min_length=1, max_length=512)]
TabIdArg = Annotated[int, msgspec.Meta(ge=0, le=2**31 - 1)]

_GATEWAYS: "weakref.WeakKeyDictionary[Any, BrowserGateway]" = weakref.WeakKeyDictionary()
_ATTACHED: "weakref.WeakKeyDictionary[Any, BrowserGateway]" = weakref.WeakKeyDictionary()
_ROUTERS: "weakref.WeakKeyDictionary[Any, Router]" = weakref.WeakKeyDictionary()


class _UnavailableGatekeeper:
    """Stands in when the store cannot be opened: every check fails closed."""

    def __init__(self, reason: str):
        from types import SimpleNamespace

        self.reason = reason
        self.grants = SimpleNamespace(session=None)

    def check(self, request: Any) -> Any:
        from host.gatekeeper.errors import GatekeeperUnavailable

        raise GatekeeperUnavailable(self.reason)

    def record_outcome(self, **_: Any) -> None:
        return None

    def bind_browser_session(self, browser_session: str) -> None:
        return None

    def revoke_grants(self) -> None:
        return None


class _Call(msgspec.Struct, forbid_unknown_fields=True):
    tool: Annotated[str, msgspec.Meta(min_length=1, max_length=256)]
    params: dict[str, Any] = {}
    tab_id: TabIdArg | None = None
    thread_id: ThreadId = "default"
    policy: Annotated[str, msgspec.Meta(max_length=64)] | None = None
    ask: bool = False  # the caller answers approvals later (tools.answer) instead of being refused


class _Tab(msgspec.Struct, forbid_unknown_fields=True):
    tab_id: TabIdArg


class _Thread(msgspec.Struct, forbid_unknown_fields=True):
    thread_id: ThreadId


class _Bind(msgspec.Struct, forbid_unknown_fields=True):
    thread_id: ThreadId
    tab_id: TabIdArg | None


class _AttachFile(msgspec.Struct, forbid_unknown_fields=True):
    thread_id: ThreadId
    name: Annotated[str, msgspec.Meta(min_length=1, max_length=255)]
    data_base64: Annotated[str, msgspec.Meta(max_length=12 * 1024 * 1024)]
    mime: Annotated[str, msgspec.Meta(max_length=255)] = "application/octet-stream"


class _RawCdp(msgspec.Struct, forbid_unknown_fields=True):
    tab_id: TabIdArg
    command: Annotated[str, msgspec.Meta(min_length=3, max_length=128)]
    params: dict[str, Any] = {}
    session_id: Annotated[str, msgspec.Meta(max_length=256)] | None = None
    timeout: Annotated[float, msgspec.Meta(gt=0, le=120)] = 30.0


class _RawContent(msgspec.Struct, forbid_unknown_fields=True):
    tab_id: TabIdArg
    tool: Annotated[str, msgspec.Meta(min_length=1, max_length=256)]
    params: Any = None
    write: bool = False
    deadline_ms: Annotated[int, msgspec.Meta(ge=0, le=600_000)] = 15_000
    expect_url: Annotated[str, msgspec.Meta(max_length=MAX_URL_CHARS)] | None = None


class _MirrorEntry(msgspec.Struct, forbid_unknown_fields=True):
    tab_id: TabIdArg
    url: Annotated[str, msgspec.Meta(max_length=MAX_URL_CHARS)]


def gateway_for(host: Any) -> BrowserGateway:
    """The browser gateway of a host process: the one its services own (which also receives the
    `browser.event` frames), or, for a host without services, one made here on first use with
    its own gatekeeper and fed the host's `browser.event` frames."""
    services = getattr(host, "services", None)
    if services is not None:
        # The host process owns one gateway (and one gatekeeper) and routes browser events to it.
        return services.gateway
    gateway = _GATEWAYS.get(host)
    if gateway is None:
        from host.gatekeeper.service import Gatekeeper
        from host.store import Store, StoreError

        try:
            gatekeeper: Any = Gatekeeper(Store())
        except StoreError as exc:
            log.exception("store unavailable: every browser tool call fails closed")
            gatekeeper = _UnavailableGatekeeper(f"the store could not be opened: {exc}")
        gateway = BrowserGateway(lambda: getattr(host, "endpoint", None), gatekeeper)
        _GATEWAYS[host] = gateway
        attach_events(host, gateway)
    session = getattr(host, "session", None)
    if session is not None and gateway.gatekeeper.grants.session != session.browser_session_id:
        gateway.gatekeeper.bind_browser_session(session.browser_session_id)
    return gateway


def attach_events(host: Any, gateway: BrowserGateway) -> None:
    """Route the host's `browser.event` frames to the gateway (through the endpoint's public
    `on` hook). Idempotent per endpoint."""
    endpoint = getattr(host, "endpoint", None)
    if endpoint is None or _ATTACHED.get(endpoint) is gateway:
        return

    def on_event(message: BrowserEvent) -> None:
        if getattr(host, "session", None) is None:
            return  # before the handshake: the host's own handler would refuse it too
        handle_event(gateway, message)

    endpoint.on(BrowserEvent, on_event)
    _ATTACHED[endpoint] = gateway


def _broadcaster(server: "ControlServer", gateway: BrowserGateway) -> None:
    gateway.takeover.listen(lambda thread_id, info: server.broadcast("browser.paused", info))


def router_for(host: Any) -> Router:
    """The browser tools of a host process (the service its router holds, or, for a host without
    services, one over `gateway_for(host)`), alone: the REPL drives the browser, while the host's
    own tools run in conversations."""
    router = _ROUTERS.get(host)
    if router is None:
        from host.browser.service import BrowserTools

        gateway = gateway_for(host)
        services = getattr(host, "services", None)
        browser = services.tools.services["browser"] if services is not None else BrowserTools(gateway)
        router = _ROUTERS[host] = Router({"browser": browser})
    gateway_for(host)  # binds the gatekeeper to the current browser session
    return router


async def tools_call(params: dict[str, Any], conn: "ControlConnection") -> dict[str, Any]:
    """Run one tool through the host's one authorisation path (validation, target, gatekeeper,
    dispatch); a call that would need the user's approval is refused, or with `ask` waits for
    `tools.answer` (this then answers at once, saying which approval it waits on)."""
    p = _params(_Call, params)
    tool_params = dict(p.params)
    if p.tab_id is not None:
        tool_params.setdefault("tabId", p.tab_id)
    host = conn.server.host
    authorizer = Authorizer(router_for(host), gateway_for(host).gatekeeper)
    if not p.ask:
        result = await call_directly(authorizer, p.tool, tool_params, thread_id=p.thread_id, policy=p.policy)
        return result.to_builtins()
    held = held_for(host)
    held.timeout_s = _approval_timeout_s(conn, held.timeout_s)
    asked: asyncio.Future[Held] = asyncio.get_running_loop().create_future()
    running = asyncio.ensure_future(call_directly(
        authorizer, p.tool, tool_params, thread_id=p.thread_id, policy=p.policy, held=held,
        asked=lambda held: asked.done() or asked.set_result(held)))
    _running.add(running)
    running.add_done_callback(_running.discard)
    await asyncio.wait({running, asked}, return_when=asyncio.FIRST_COMPLETED)
    if running.done():
        return running.result().to_builtins()
    waiting = asked.result()
    waiting.outcome = running  # the call goes on once answered; tools.answer returns its result
    return waiting_result(p.tool, waiting, held.clock())


def _approval_timeout_s(conn: "ControlConnection", fallback: float) -> float:
    """How long an approval waits: the engine's setting (engine.json), as for a chat's."""
    from host.control.engine_access import running_engine
    from host.control.errors import ControlError

    try:
        return float(running_engine(conn).approval_timeout_s())
    except ControlError:
        return fallback


# Calls waiting on an approval outlive the request that started them.
_running: "set[asyncio.Future[Any]]" = set()


def waiting_result(tool: str, held: Held, now: float) -> dict[str, Any]:
    """The answer to a `tools.call` that now waits on approval `held`: the exact command that
    runs it."""
    from host.tools.failure import ToolCode, ToolFailure
    from host.tools.result import failure

    approval = held.approval_id
    problem = ToolFailure(ToolCode.APPROVAL_REQUIRED, f"waiting for your approval {approval}: "
                          f"tw.approve('{approval}') runs it, tw.decline('{approval}') does not",
                          phase="authorize", details={"dispatched": False, "waiting": True, "approvalId": approval,
                                                      "request": held.request,
                                                      "remainingMs": held.view(now)["remainingMs"]})
    return failure(tool, problem, tab_id=held.request.get("tabId")).to_builtins()


async def tools_list(params: dict[str, Any], conn: "ControlConnection") -> list[dict[str, Any]]:
    """Every tool `tools.call` can run, with its declaration and parameter schema."""
    return [describe(spec) for spec in router_for(conn.server.host).offered() if not spec.interaction]


async def browser_refs(params: dict[str, Any], conn: "ControlConnection") -> dict[str, Any]:
    """The host-side ref map of one tab."""
    p = _params(_Tab, params)
    return gateway_for(conn.server.host).refs.describe(p.tab_id)


async def browser_bind_target(params: dict[str, Any], conn: "ControlConnection") -> dict[str, Any]:
    """Capture a thread's tab, as a submission would (null: no web page)."""
    p = _params(_Bind, params)
    gateway = gateway_for(conn.server.host)
    gateway.begin_turn(p.thread_id, p.tab_id, bound=True)
    return gateway.routes.describe(p.thread_id)


async def browser_routes(params: dict[str, Any], conn: "ControlConnection") -> dict[str, Any]:
    """A thread's default tab and tab traces."""
    p = _params(_Thread, params)
    return gateway_for(conn.server.host).routes.describe(p.thread_id)


async def browser_end_turn(params: dict[str, Any], conn: "ControlConnection") -> dict[str, Any]:
    """End a thread's turn: its driven tabs and floating lock are forgotten, and the guard of
    its tabs is lifted."""
    p = _params(_Thread, params)
    gateway = gateway_for(conn.server.host)
    gateway.end_turn(p.thread_id)
    return gateway.routes.describe(p.thread_id)


async def browser_guard(params: dict[str, Any], conn: "ControlConnection") -> dict[str, Any]:
    """The navigation guard's state: which tabs it guards for whom, its rules and its cost."""
    return gateway_for(conn.server.host).guard.describe()


class _SiteAccess(msgspec.Struct, forbid_unknown_fields=True):
    origin: Annotated[str, msgspec.Meta(min_length=1, max_length=2048)] | None = None


async def browser_site_access(params: dict[str, Any], conn: "ControlConnection") -> dict[str, Any]:
    """The match patterns the extension holds site access for and, given an origin, whether it
    may script pages there (only a person's click or the launch can grant more)."""
    p = _params(_SiteAccess, params)
    gateway = gateway_for(conn.server.host)
    held = await gateway.bridge.api("permissions.getAll")
    answer: dict[str, Any] = {"origins": sorted((held or {}).get("origins") or [])}
    if p.origin is not None:
        from host.gatekeeper.origins import normalize_origin

        origin = normalize_origin(p.origin).text
        answer["origin"] = origin
        web = origin.startswith(("http://", "https://"))
        answer["granted"] = web and bool(await gateway.bridge.api("permissions.contains", {"origins": [f"{origin}/*"]}))
    return answer


class _GrantSite(msgspec.Struct, forbid_unknown_fields=True):
    origin: Annotated[str, msgspec.Meta(min_length=1, max_length=2048)]


async def browser_grant_site(params: dict[str, Any], conn: "ControlConnection") -> dict[str, Any]:
    """Grant the extension site access to a web origin without a click (see site_grant.py):
    `{origin, pattern, granted: true, restarting}`; `restarting` when the extension reloads to
    take it (this host ends with it, and the browser starts a new one)."""
    from host.browser import site_grant
    from host.control.errors import ControlError

    p = _params(_GrantSite, params)
    origin = _web_origin(p.origin)
    pattern = f"{origin}/*"
    gateway = gateway_for(conn.server.host)
    if await gateway.bridge.api("permissions.contains", {"origins": [pattern]}):
        return {"origin": origin, "pattern": pattern, "granted": True, "restarting": False}
    try:
        patterns = site_grant.add_site(site_grant.extension_copy(), pattern)
    except site_grant.SiteGrantRefused as exc:
        raise ControlError(ErrorCode.UNSUPPORTED, f"cannot grant {origin} from here: {exc}") from None
    log.warning("site access to %s added to the extension copy's manifest; the extension reloads", origin)
    # The extension answers before it reloads, so this answer still reaches the caller.
    await gateway.bridge.api("runtime.reloadSoon")
    return {"origin": origin, "pattern": pattern, "granted": True, "restarting": True, "patterns": patterns}


async def browser_revoke_site(params: dict[str, Any], conn: "ControlConnection") -> dict[str, Any]:
    """Take back the extension's site access to a web origin: `{origin, pattern, revoked,
    restarting}`. A grant the copy's manifest holds goes with a reload (this host ends with it);
    one a person gave in the side panel is removed at once."""
    from host.browser import site_grant
    from host.control.errors import ControlError

    p = _params(_GrantSite, params)
    origin = _web_origin(p.origin)
    pattern = f"{origin}/*"
    gateway = gateway_for(conn.server.host)
    try:
        folder = site_grant.extension_copy()
        in_manifest = pattern in site_grant.manifest_sites(folder)
    except site_grant.SiteGrantRefused:
        folder, in_manifest = None, False
    if folder is not None and in_manifest:
        site_grant.remove_site(folder, pattern)
        await gateway.bridge.api("runtime.reloadSoon")
        return {"origin": origin, "pattern": pattern, "revoked": True, "restarting": True}
    if not await gateway.bridge.api("permissions.contains", {"origins": [pattern]}):
        return {"origin": origin, "pattern": pattern, "revoked": False, "restarting": False}
    try:
        removed = await gateway.bridge.api("permissions.remove", {"origins": [pattern]})
    except Exception as exc:  # a grant wider than this origin's, held in the manifest the launch did not copy
        raise ControlError(ErrorCode.UNSUPPORTED, f"cannot take back {origin} from here: {exc}") from None
    gateway.site_access.changed()  # at once, not when the browser's event arrives
    return {"origin": origin, "pattern": pattern, "revoked": bool(removed), "restarting": False}


def _web_origin(text: str) -> str:
    from host.control.errors import ControlError
    from host.gatekeeper.origins import normalize_origin

    origin = normalize_origin(text).text
    if not origin.startswith(("http://", "https://")):
        raise ControlError(ErrorCode.INVALID_MESSAGE, f"{text!r} is not a web origin (http or https)")
    return origin


async def browser_resume(params: dict[str, Any], conn: "ControlConnection") -> dict[str, Any]:
    """Lift a manual-takeover pause."""
    p = _params(_Thread, params)
    return {"resumed": gateway_for(conn.server.host).takeover.resume(p.thread_id)}


async def browser_paused(params: dict[str, Any], conn: "ControlConnection") -> list[dict[str, Any]]:
    """Every current manual-takeover pause."""
    return gateway_for(conn.server.host).takeover.paused()


async def browser_deep_refs(params: dict[str, Any], conn: "ControlConnection") -> dict[str, Any]:
    """The latest deep read (deep refs and their identities) of one tab."""
    p = _params(_Tab, params)
    return gateway_for(conn.server.host).deep_refs.describe(p.tab_id)


async def browser_attach_file(params: dict[str, Any], conn: "ControlConnection") -> dict[str, Any]:
    """Hand a file to a thread as the user (the control socket is the user's own): a file upload
    may then put it into a page of that thread."""
    import base64
    import binascii

    from host.control.server import ControlError

    p = _params(_AttachFile, params)
    try:
        data = base64.b64decode(p.data_base64, validate=True)
        item = gateway_for(conn.server.host).attachments.add(p.thread_id, p.name, data, mime=p.mime, provenance="user")
    except (binascii.Error, ValueError) as exc:
        raise ControlError(ErrorCode.INVALID_MESSAGE, f"invalid attachment: {exc}") from None
    return {"attachmentId": item.id, "name": item.name, "bytes": len(item.data)}


async def browser_debugger(params: dict[str, Any], conn: "ControlConnection") -> dict[str, Any]:
    """What the host knows about the debugger in one tab."""
    p = _params(_Tab, params)
    manager = gateway_for(conn.server.host).cdp
    state = manager.state(p.tab_id)
    return {"tabId": p.tab_id, "managerEpoch": manager.epoch, "epoch": state.epoch, "epochReason": state.epoch_reason,
            "attached": state.attached, "detachReason": state.detach_reason, "userStopped": state.user_stopped,
            "sessions": [{"sessionId": c.session_id, "targetId": c.target_id, "parent": c.parent, "url": c.url}
                         for c in state.sessions.values()],
            "recentDetaches": list(manager.detaches)}


async def test_cdp(params: dict[str, Any], conn: "ControlConnection") -> Any:
    """One raw CDP command through the bridge client (tests of the bridge only)."""
    from host.cdp.errors import CdpError

    p = _params(_RawCdp, params)
    client = gateway_for(conn.server.host).cdp.client(p.tab_id)
    try:
        return {"ok": True, "value": await client.send(p.command, p.params, session_id=p.session_id, timeout=p.timeout)}
    except CdpError as exc:
        return {"ok": False, "error": {"code": exc.code, "message": exc.message, "details": exc.details}}


async def test_landing(params: dict[str, Any], conn: "ControlConnection") -> Any:
    """Where an L2 write would land, resolved as its permission checks resolve it (nothing is
    judged or sent), with the host's own time for that resolution (tests and benchmarks only)."""
    import time

    from host.browser.l2.landing import lands_in_frame, resolve_landing
    from host.tools.failure import ToolFailure

    p = _params(_Call, params)
    tool_params = dict(p.params)
    if p.tab_id is not None:
        tool_params.setdefault("tabId", p.tab_id)
    router = router_for(conn.server.host)
    try:
        call = router.decode(p.thread_id, p.tool, tool_params)
        if not lands_in_frame(call.spec):
            return {"ok": False, "error": {"code": "invalid_params", "message": f"{p.tool} is not an L2 write"}}
        service = router.services["browser"]
        tab = await service.find_tab(call)  # type: ignore[attr-defined]
        started = time.perf_counter()
        landing = await resolve_landing(call, gateway_for(conn.server.host), tab)
        took = (time.perf_counter() - started) * 1000
    except ToolFailure as exc:
        return {"ok": False, "error": msgspec.to_builtins(exc.info())}
    return {"ok": True, "origin": landing.origin, "tabOrigin": tab.origin, "frameId": landing.frame_id,
            "kind": landing.kind, "epoch": landing.epoch, "ms": took}


async def test_content_call(params: dict[str, Any], conn: "ControlConnection") -> Any:
    """A raw content call, bypassing the gateway: tests of the executor's own boundary only."""
    from host.tools.failure import ToolFailure

    p = _params(_RawContent, params)
    gateway = gateway_for(conn.server.host)
    try:
        return {"ok": True, "value": await gateway.bridge.content(p.tab_id, p.tool, p.params, write=p.write,
                                                                  deadline_ms=p.deadline_ms, expect_url=p.expect_url)}
    except ToolFailure as exc:
        return {"ok": False, "error": msgspec.to_builtins(exc.info())}


async def test_tab_mirror(params: dict[str, Any], conn: "ControlConnection") -> Any:
    """Make the host's record of a tab say `url`, as a tab event not yet arrived would leave it:
    tests of what a read judged from a stale record does."""
    from host.browser.target import target_from_tab

    p = _params(_MirrorEntry, params)
    gateway_for(conn.server.host).tab_mirror.seen(target_from_tab({"id": p.tab_id, "url": p.url}))
    return {"ok": True}


def register(server: "ControlServer") -> None:
    """Serve the browser-tool methods on `server` (call once per control server)."""
    server.register("tools.call", tools_call)
    server.register("tools.list", tools_list)
    server.register("browser.refs", browser_refs)
    server.register("browser.bind_target", browser_bind_target)
    server.register("browser.routes", browser_routes)
    server.register("browser.end_turn", browser_end_turn)
    server.register("browser.guard", browser_guard)
    server.register("browser.site_access", browser_site_access)
    server.register("browser.grant_site", browser_grant_site)
    server.register("browser.revoke_site", browser_revoke_site)
    server.register("browser.resume", browser_resume)
    server.register("browser.paused", browser_paused)
    server.register("browser.deep_refs", browser_deep_refs)
    server.register("browser.attach_file", browser_attach_file)
    server.register("browser.debugger", browser_debugger)
    if os.environ.get(TEST_HOOKS_ENV) == "1":
        server.register("test.content_call", test_content_call)
        server.register("test.cdp", test_cdp)
        server.register("test.landing", test_landing)
        server.register("test.tab_mirror", test_tab_mirror)
    if getattr(server.host, "services", None) is None:
        _broadcaster(server, gateway_for(server.host))
    # else: HostServices creates the gateway on first use and wires its pause broadcasts
