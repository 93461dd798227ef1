"""A stand-in for the connected extension: answers the gateway's BrowserCall and ContentCall
requests from a small in-memory browser, records every content call it receives, and installs
the navigation guard's rules (or refuses them, when a test says so)."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any, Awaitable, Callable

from protocol.errors import ErrorInfo
from protocol.messages import BrowserCall, ContentCall, GuardInstall

from host.transport.errors import RemoteError
from tests.support.fake_snapshot import snapshot

ContentHandler = Callable[[ContentCall], Awaitable[Any]]


def remote(code: str, message: str = "", **fields: Any) -> RemoteError:
    """The error the real relay would send back."""
    return RemoteError(ErrorInfo(code=code, message=message or code, **fields))


class FakeExtension:
    """Enough of the browser for the gateway: tabs, permissions and a scriptable page."""

    def __init__(self) -> None:
        self.is_open = True
        self.tabs: dict[int, dict[str, Any]] = {
            1: {"id": 1, "url": "http://site.test/a", "title": "A", "windowId": 9, "status": "complete", "active": True,
                "lastAccessed": 10},
            2: {"id": 2, "url": "chrome://newtab/", "title": "New tab", "windowId": 9, "status": "complete",
                "active": False, "lastAccessed": 5},
        }
        self.site_access = True
        self.content_calls: list[ContentCall] = []
        self.api_calls: list[BrowserCall] = []
        self.guard_installs: list[list[Any]] = []  # the rules of every guard.install, in order
        self.guard_refused = False  # answer guard.install with a failure
        self.last_install_refused = False  # how the latest guard.install sent will be answered
        self.content: ContentHandler = self._default_content
        self._ids = itertools.count(1)
        self._snap = itertools.count(1)

    async def _default_content(self, call: ContentCall) -> Any:
        n = next(self._snap)
        return {"resultText": f"{call.tool} done", "snapshot": snapshot("doc", n, ("button", "Save"), ("textbox", "Password"))}

    async def request(self, build: Callable[[int], Any], timeout: float | None = None) -> Any:
        """Answer one request the gateway builds: content calls from `content`, the rest from
        `api`."""
        return await self.begin(build, timeout)

    def begin(self, build: Callable[[int], Any], timeout: float | None = None) -> Any:
        """`request`, with the message built (sent) now; what answers it. An API call is answered
        as it arrives, as the browser does: from the state before anything sent after it."""
        message = build(next(self._ids))
        if isinstance(message, GuardInstall):
            self.last_install_refused = self.guard_refused
        if isinstance(message, BrowserCall):
            self.api_calls.append(message)
            try:
                return self._later(self.api(message.api, *message.args), None)
            except Exception as exc:
                return self._later(None, exc)
        return self._answer(message)

    async def _later(self, answer: Any, error: Exception | None) -> Any:
        await asyncio.sleep(0)
        if error is not None:
            raise error
        return answer

    async def _answer(self, message: Any) -> Any:
        await asyncio.sleep(0)
        if isinstance(message, ContentCall):
            self.content_calls.append(message)
            return await self.content(message)
        if isinstance(message, GuardInstall):
            if self.guard_refused:
                raise remote("guard_unavailable", "the browser refused the navigation guard's rules")
            self.guard_installs.append(list(message.rules))
            return {"installed": len(message.rules)}
        assert isinstance(message, BrowserCall)
        self.api_calls.append(message)
        return self.api(message.api, *message.args)

    def api(self, name: str, *args: Any) -> Any:
        """Answer an extension API call: tabs.get, tabs.query, permissions.contains,
        tabs.waitForLoad and tabs.navigate."""
        if name == "tabs.get":
            tab = self.tabs.get(args[0])
            if tab is None:
                raise remote("not_found", f"tabs.get: No tab with id: {args[0]}.")
            return dict(tab)
        if name == "tabs.query":
            query = args[0] if args else {}
            return [dict(t) for t in self.tabs.values() if all(t.get(k) == v for k, v in query.items())]
        if name == "permissions.contains":
            return self.site_access
        if name == "tabs.list":
            return [dict(t) for t in self.tabs.values()]
        if name == "tabs.remove":
            self.tabs.pop(args[0], None)
            return None
        if name == "tabs.waitForLoad":
            tab = self.tabs.get(args[0])
            return {"closed": tab is None, "timedOut": False, "tab": dict(tab) if tab else None}
        if name == "tabs.navigate":  # as the worker: behind the guard's installs sent before it
            options = args[1]
            if options.get("afterGuard") and self.last_install_refused:
                raise remote("guard_unavailable", "the navigation guard's rules for this load were refused",
                             details={"dispatched": False})
            tab = self.tabs[args[0]]
            tab["url"] = options["url"]
            return {"closed": False, "timedOut": False, "tab": dict(tab)}
        raise remote("unsupported", f"fake extension has no {name}")
