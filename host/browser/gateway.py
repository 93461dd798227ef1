"""`BrowserGateway`: one tool call from name and raw parameters to result.

    look up the tool -> validate the parameters -> resolve the tab -> authorise (initial)
    -> wait for the tab's turn -> resolve and authorise again (dispatch) -> run -> result

Every failure on the way is a structured result (`ok: false`, code, phase, retryable), never an
exception; nothing reaches the browser unless both authorisations allowed it.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Literal

import msgspec

from host.browser import l0_tools, page_reads, page_writes
from host.browser.authorize import authorize
from host.browser.bridge import Bridge
from host.browser.call import ToolCall
from host.browser.errors import Code, ToolFailure
from host.browser.params import PARAMS_TYPES, decode_params
from host.browser.refmap import RefMap
from host.browser.results import ToolResult, failure
from host.browser.routing import TabRoutes
from host.browser.serial import TabQueue
from host.browser.takeover import Takeover
from host.browser.target import TabTarget, get_tab, resolve_page_tab
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
    "press_key": Implementation(page_writes.run_write, "page"),
    "batch_actions": Implementation(page_writes.run_write, "page"),
}
assert set(IMPLEMENTATIONS) == set(PARAMS_TYPES), "every tool needs both a params type and an implementation"

MAX_THREAD_ID = 512


class BrowserGateway:
    """The browser tools of one host process (one browser connection)."""

    def __init__(self, endpoint: Callable[[], Any], gatekeeper: Gatekeeper):
        self.bridge = Bridge(endpoint)
        self.gatekeeper = gatekeeper
        self.refs = RefMap()
        self.routes = TabRoutes()
        self.queue = TabQueue()
        self.takeover = Takeover()

    # ------------------------------------------------------------------ calls

    async def call(self, tool: str, params: Any, *, thread_id: str = "default", policy: str | None = None) -> ToolResult:
        """Run one tool call; always returns a ToolResult (failures included)."""
        tab_id: int | None = None
        try:
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
            tab_id = call.tab_id
            await self._authorize(call, implementation.target, policy, "initial")
            first = call.target
            async with self.queue.hold(tab_id):
                # The tab may have moved on while this call waited: resolve and judge again.
                call.target = await self._resolve(call, implementation.target)
                if first is not None and call.target is not None and (
                        call.target.tab_id != first.tab_id or call.target.origin != first.origin):
                    raise ToolFailure(Code.TARGET_CHANGED, f"tab {first.tab_id} moved to {call.target.origin} before "
                                      "the call could run; look at it again", phase="dispatch", retryable=True,
                                      details={"dispatched": False})
                self.takeover.check(thread_id)
                await self._authorize(call, implementation.target, policy, "dispatch")
                result = await implementation.run(call)
            self._record_outcome(thread_id, spec.name, call.target, "ok")
            return result
        except ToolFailure as problem:
            if problem.code not in (Code.UNKNOWN_TOOL, Code.INVALID_PARAMS):
                self._record_outcome(thread_id, str(tool), None, problem.code)
            return failure(str(tool), problem, tab_id=tab_id)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug must still produce a structured answer
            log.exception("browser tool %s failed", tool)
            return failure(str(tool), ToolFailure(Code.UNKNOWN, f"internal error: {type(exc).__name__}: {exc}",
                                                  phase="execute"), tab_id=tab_id)

    async def _resolve(self, call: ToolCall, kind: TargetKind) -> TabTarget | None:
        if kind == "none":
            return None
        if kind == "explicit":
            target = await get_tab(self.bridge, getattr(call.params, "tab_id"))
        else:
            target = await resolve_page_tab(self.bridge, self.routes, call.thread_id, getattr(call.params, "tab_id", None))
        return target

    async def _site_access(self, target: TabTarget | None, kind: TargetKind) -> bool | None:
        if kind != "page" or target is None:
            return None
        pattern = f"{target.origin}/*"
        return bool(await self.bridge.api("permissions.contains", {"origins": [pattern]}))

    async def _authorize(self, call: ToolCall, kind: TargetKind, policy: str | None, phase: str) -> None:
        if call.spec.is_write and kind == "page":
            page_writes.require_known_refs(call)
        site_access = await self._site_access(call.target, kind)
        decision = authorize(
            self.gatekeeper,
            thread_id=call.thread_id, tool=call.tool, params=msgspec.to_builtins(call.params),
            origin=call.target.origin if call.target is not None else "", policy=policy,
            target=page_writes.facts(call), site_access=site_access, phase=phase,  # type: ignore[arg-type]
        )
        call.details["decision"] = {"verdict": decision.verdict, "code": decision.code, "flags": list(decision.flags)}

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
