"""`BrowserGateway`: one tool call from name and raw parameters to result.

    prepare: look up the tool -> validate the parameters -> resolve the tab -> element facts
    execute_authorized: wait for the tab's turn -> resolve again (same tab and origin) ->
        takeover check -> authorise (the caller's check, at dispatch) -> run -> result

`call()` is both halves with the gateway's own authorisation (initial and dispatch; ASK is a
refusal there). The engine uses the halves itself: it asks the gatekeeper, waits for approvals
and passes its dispatch check to `execute_authorized`. Every failure on the way is a structured
result (`ok: false`, code, phase, retryable), never an exception; nothing reaches the browser
unless the dispatch-phase authorisation allowed it.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Literal

import msgspec

from host.browser import l0_tools, page_reads, page_script, page_writes
from host.browser.authorize import authorize
from host.browser.bridge import Bridge
from host.browser.call import ToolCall
from host.browser.errors import Code, ToolFailure
from host.browser.l2 import tools as l2_tools
from host.browser.l2.attachments import Attachments
from host.browser.l2.deep_refs import DeepRefMap, is_deep_ref
from host.browser.l2.targets import L1Translations
from host.browser.params import PARAMS_TYPES, decode_params
from host.browser.refmap import RefMap
from host.browser.results import ToolResult, failure
from host.browser.routing import TabRoutes
from host.browser.serial import TabQueue
from host.browser.takeover import Takeover
from host.browser.target import TabTarget, get_tab, resolve_page_tab
from host.cdp.manager import CdpManager
from host.cdp.transport import EndpointTransport
from host.gatekeeper.service import Gatekeeper
from host.tools.catalog import lookup

log = logging.getLogger("tabwarden.browser")

TargetKind = Literal["none", "page", "routed", "explicit"]


@dataclass(frozen=True)
class Implementation:
    """How the gateway runs one tool: the coroutine and what it acts on.

    target: `page` (an http(s) tab, run inside it: site access needed), `routed` (an http(s) tab
    driven through the tabs API), `explicit` (the tab named by `tabId`, any page), `none`.
    """

    run: Callable[[ToolCall], Awaitable[ToolResult]]
    target: TargetKind


IMPLEMENTATIONS: dict[str, Implementation] = {
    "tabs_list": Implementation(l0_tools.tabs_list, "none"),
    "tab_open": Implementation(l0_tools.tab_open, "none"),
    "tab_focus": Implementation(l0_tools.tab_focus, "explicit"),
    "tab_close": Implementation(l0_tools.tab_close, "explicit"),
    "navigate": Implementation(l0_tools.navigate, "routed"),
    "go_back": Implementation(l0_tools.go_back, "routed"),
    "go_forward": Implementation(l0_tools.go_forward, "routed"),
    "history_search": Implementation(l0_tools.history_search, "none"),
    "bookmarks_search": Implementation(l0_tools.bookmarks_search, "none"),
    "top_sites": Implementation(l0_tools.top_sites, "none"),
    "sessions_recently_closed": Implementation(l0_tools.sessions_recently_closed, "none"),
    "session_restore": Implementation(l0_tools.session_restore, "none"),
    "tab_groups_list": Implementation(l0_tools.tab_groups_list, "none"),
    "tabs_group": Implementation(l0_tools.tabs_group, "none"),
    "tab_group_update": Implementation(l0_tools.tab_group_update, "none"),
    "read_page": Implementation(page_reads.read_tool, "page"),
    "find_in_page": Implementation(page_reads.read_tool, "page"),
    "extract": Implementation(page_reads.extract, "page"),
    "get_selection": Implementation(page_reads.read_tool, "page"),
    "scroll": Implementation(page_reads.read_tool, "page"),
    "wait_for": Implementation(page_reads.read_tool, "page"),
    "click": Implementation(page_writes.run_write, "page"),
    "type": Implementation(page_writes.run_write, "page"),
    "select_option": Implementation(page_writes.run_write, "page"),
    "hover": Implementation(page_writes.run_write, "page"),
    "batch_actions": Implementation(page_writes.run_write, "page"),
    "press_key": Implementation(l2_tools.press_key, "page"),
    "read_page_deep": Implementation(l2_tools.read_page_deep, "page"),
    "screenshot": Implementation(l2_tools.screenshot, "page"),
    "click_trusted": Implementation(l2_tools.click_trusted, "page"),
    "type_trusted": Implementation(l2_tools.type_trusted, "page"),
    "click_xy": Implementation(l2_tools.click_xy, "page"),
    "drag": Implementation(l2_tools.drag, "page"),
    "upload_file": Implementation(l2_tools.upload_file, "page"),
    "run_javascript": Implementation(page_script.run_javascript, "page"),
}
assert set(IMPLEMENTATIONS) == set(PARAMS_TYPES), "every tool needs both a params type and an implementation"

MAX_THREAD_ID = 512


@dataclass
class PreparedCall:
    """A validated call on its resolved target, described for the gatekeeper and the approval
    card. `execute_authorized` runs it; nothing that acts has been sent yet."""

    call: ToolCall
    implementation: Implementation
    params: dict[str, Any]  # normalised (validated, defaults applied)
    origin: str  # the target's origin ("" when the call has none)
    tab_id: int | None
    target: dict[str, Any] | None  # element facts (input types, hints)
    target_line: str | None  # the acted-on element's line from the latest snapshot
    site_access: bool | None  # whether the extension may script the origin (None: not a page call)

    @property
    def tool(self) -> str:
        return self.call.tool

    @property
    def thread_id(self) -> str:
        return self.call.thread_id


Authorize = Callable[[PreparedCall], Awaitable[None]]


class _Refused(Exception):
    """Carries an exception the caller's `authorize` raised, past the gateway's own handlers."""

    def __init__(self, error: BaseException):
        super().__init__(str(error))
        self.error = error


class BrowserGateway:
    """The browser tools of one host process (one browser connection)."""

    def __init__(self, endpoint: Callable[[], Any], gatekeeper: Gatekeeper):
        self.bridge = Bridge(endpoint)
        self.gatekeeper = gatekeeper
        self.refs = RefMap()
        self.routes = TabRoutes()
        self.queue = TabQueue()
        self.takeover = Takeover()
        self.cdp = CdpManager(EndpointTransport(endpoint))
        self.deep_refs = DeepRefMap(self.cdp.epoch)
        self.l1_translations = L1Translations()
        self.attachments = Attachments()

    # ------------------------------------------------------------------ the two halves

    async def prepare(self, tool: str, params: Any, *, thread_id: str) -> PreparedCall:
        """Validate the call, resolve its tab, and describe it (element facts, the target's
        snapshot line, site access). Sends nothing that acts; raises ToolFailure."""
        spec = lookup(tool) if isinstance(tool, str) else None
        if spec is None:
            raise ToolFailure(Code.UNKNOWN_TOOL, f"there is no tool named {tool!r}", phase="validate",
                              details={"dispatched": False})
        implementation = IMPLEMENTATIONS.get(spec.name)
        if implementation is None:
            raise ToolFailure(Code.UNSUPPORTED, f"{spec.name} is a {spec.level} tool this host cannot run yet",
                              phase="validate", details={"dispatched": False})
        if not isinstance(thread_id, str) or not 1 <= len(thread_id) <= MAX_THREAD_ID:
            raise ToolFailure(Code.INVALID_PARAMS, f"thread id must be 1..{MAX_THREAD_ID} characters", phase="validate")
        decoded = decode_params(spec.name, params)
        self.takeover.check(thread_id)
        call = ToolCall(spec, decoded, thread_id, None, self)
        call.target = await self._resolve(call, implementation.target)
        return await self._describe(call, implementation)

    async def execute_authorized(self, prepared: PreparedCall, authorize: Authorize) -> ToolResult:
        """Run a prepared call: hold the tab's queue, resolve the tab again (same tab and origin,
        else `target_changed`), check for a manual takeover, await `authorize(fresh)` (it raises
        to refuse; a ToolFailure becomes the result, anything else propagates), then run.
        Failures come back as ToolResult(ok=False)."""
        call = prepared.call
        implementation = prepared.implementation
        first = call.target
        try:
            async with self.queue.hold(call.tab_id):
                # The tab may have moved on while this call waited for approval or its turn.
                call.target = await self._resolve(call, implementation.target)
                if first is not None and call.target is not None and (
                        call.target.tab_id != first.tab_id or call.target.origin != first.origin):
                    raise ToolFailure(Code.TARGET_CHANGED, f"tab {first.tab_id} moved from {first.origin} to "
                                      f"{call.target.origin} after the permission check; look at it again and do not "
                                      "reuse the previous approval", phase="dispatch", retryable=True,
                                      details={"dispatched": False})
                self.takeover.check(call.thread_id)
                fresh = await self._describe(call, implementation)
                try:
                    await authorize(fresh)
                except ToolFailure:
                    raise
                except Exception as exc:
                    raise _Refused(exc) from exc
                return await implementation.run(call)
        except _Refused as refused:
            raise refused.error from None
        except ToolFailure as problem:
            return failure(call.tool, problem, tab_id=call.tab_id)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug must still produce a structured answer
            log.exception("browser tool %s failed", call.tool)
            return failure(call.tool, ToolFailure(Code.UNKNOWN, f"internal error: {type(exc).__name__}: {exc}",
                                                  phase="execute"), tab_id=call.tab_id)

    async def call(self, tool: str, params: Any, *, thread_id: str = "default", policy: str | None = None) -> ToolResult:
        """Run one tool call with the gateway's own authorisation (ASK refuses); always returns a
        ToolResult (failures included)."""
        prepared: PreparedCall | None = None
        try:
            prepared = await self.prepare(tool, params, thread_id=thread_id)
            self._authorize(prepared, policy, "initial")
        except ToolFailure as problem:
            if problem.code not in (Code.UNKNOWN_TOOL, Code.INVALID_PARAMS):
                self._record_outcome(thread_id, str(tool), None, problem.code)
            return failure(str(tool), problem, tab_id=prepared.tab_id if prepared is not None else None)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug must still produce a structured answer
            log.exception("browser tool %s failed", tool)
            return failure(str(tool), ToolFailure(Code.UNKNOWN, f"internal error: {type(exc).__name__}: {exc}",
                                                  phase="validate"))

        async def own(fresh: PreparedCall) -> None:
            self._authorize(fresh, policy, "dispatch")

        result = await self.execute_authorized(prepared, own)
        outcome = "ok" if result.ok else (result.error.code if result.error is not None else "failed")
        self._record_outcome(thread_id, prepared.tool, prepared.call.target, outcome)
        return result

    # ------------------------------------------------------------------ turns

    def begin_turn(self, thread_id: str, tab_id: int | None, *, bound: bool) -> None:
        """A user's message starts a turn: bind its tab (when `bound`), lift a manual-takeover
        pause, and let trusted tools attach again where the user had stopped the debugger."""
        if bound:
            self.routes.bind(thread_id, tab_id)
        self.takeover.resume(thread_id)
        self.cdp.allow_again()

    def end_turn(self, thread_id: str) -> None:
        """A turn ended: forget its driven tabs and any floating target."""
        self.routes.end_turn(thread_id)

    # ------------------------------------------------------------------ helpers

    async def _resolve(self, call: ToolCall, kind: TargetKind) -> TabTarget | None:
        if kind == "none":
            return None
        if kind == "explicit":
            return await get_tab(self.bridge, getattr(call.params, "tab_id"))
        return await resolve_page_tab(self.bridge, self.routes, call.thread_id, getattr(call.params, "tab_id", None))

    async def _site_access(self, target: TabTarget | None, kind: TargetKind) -> bool | None:
        if kind != "page" or target is None:
            return None
        pattern = f"{target.origin}/*"
        return bool(await self.bridge.api("permissions.contains", {"origins": [pattern]}))

    async def _describe(self, call: ToolCall, implementation: Implementation) -> PreparedCall:
        kind = implementation.target
        if call.spec.is_write and kind == "page":
            page_writes.require_known_refs(call)
        target = call.target
        return PreparedCall(
            call=call, implementation=implementation, params=msgspec.to_builtins(call.params),
            origin=target.origin if target is not None else "", tab_id=call.tab_id,
            target=page_writes.facts(call) if kind == "page" else None, target_line=self._target_line(call),
            site_access=await self._site_access(target, kind),
        )

    def _target_line(self, call: ToolCall) -> str | None:
        if call.tab_id is None:
            return None
        used = page_writes.refs_used(call)
        if not used:
            return None
        _, text = self.refs.last_text(call.tab_id)
        lines = []
        for ref in used:
            marker = f"[ref={ref}]"
            if is_deep_ref(ref):
                node = self.deep_refs.peek(call.tab_id, ref)
                found = f'- {node.role} "{node.name}" {marker}' if node is not None else None
            else:
                found = next((line.strip() for line in text.split("\n") if marker in line), None)
                if found is None:
                    hint = self.refs.lookup(call.tab_id, ref)
                    found = f'- {hint.role} "{hint.name}" {marker}' if hint is not None else None
            if found:
                lines.append(found[:500])
        return "\n".join(lines) or None

    def _authorize(self, prepared: PreparedCall, policy: str | None, phase: str) -> None:
        decision = authorize(
            self.gatekeeper,
            thread_id=prepared.thread_id, tool=prepared.tool, params=prepared.params, origin=prepared.origin,
            policy=policy, target=prepared.target, site_access=prepared.site_access, phase=phase,  # type: ignore[arg-type]
        )
        prepared.call.details["decision"] = {"verdict": decision.verdict, "code": decision.code,
                                             "flags": list(decision.flags)}

    def _record_outcome(self, thread_id: str, tool: str, target: TabTarget | None, outcome: str) -> None:
        try:
            self.gatekeeper.record_outcome(thread_id=thread_id[:MAX_THREAD_ID] or "default", tool=tool, outcome=outcome,
                                           target_origin=target.origin if target is not None else "")
        except Exception:
            log.debug("outcome not audited", exc_info=True)

    # ------------------------------------------------------------------ descriptions

    def describe_tools(self) -> list[dict[str, Any]]:
        """Every browser tool with its declaration and parameter schema."""
        from host.browser.params import params_schema

        out = []
        for name in IMPLEMENTATIONS:
            spec = lookup(name)
            assert spec is not None
            out.append({
                "name": name, "label": spec.label, "description": spec.description, "level": spec.level,
                "effects": spec.effects, "category": spec.category, "recovery": spec.recovery,
                "resultTrust": spec.result_trust, "parameters": params_schema(name),
            })
        return out
