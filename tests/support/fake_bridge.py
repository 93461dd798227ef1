"""A fake extension bridge for the built-ins (`api` and `content`, as the built-ins call them):
tabs, site access, downloads (with the navigation guard's tab that follows a download's
redirects first), the page indicator, and a page whose text a test changes."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from host.tools.failure import ToolCode, ToolFailure

PAGE = "https://shop.example/orders/1"


@dataclass
class FakeBridge:
    """The extension as the built-ins see it (`api` and `content`)."""

    tabs: dict[int, dict[str, Any]] = field(default_factory=lambda: {7: {"id": 7, "url": PAGE, "title": "Order",
                                                                        "status": "complete", "windowId": 1}})
    text: dict[int, str] = field(default_factory=lambda: {7: "Order 1: preparing"})
    site_access: bool = True
    calls: list[tuple[str, tuple]] = field(default_factory=list)
    downloads: dict[int, dict[str, Any]] = field(default_factory=dict)
    connected: bool = True
    # How `guard.follow` answers (where a download's redirect chain ends); None: at the URL itself.
    followed: dict[str, Any] | None = None

    def api_now(self, name: str, *args: Any, timeout: float = 10.0) -> Any:
        return self.api(name, *args, timeout=timeout)

    async def api(self, name: str, *args: Any, timeout: float = 10.0) -> Any:
        self.calls.append((name, args))
        if not self.connected:
            raise ToolFailure(ToolCode.NOT_CONNECTED, "no browser is connected to the host", phase="dispatch")
        if name == "tabs.get":
            tab = self.tabs.get(args[0])
            if tab is None:
                raise ToolFailure("not_found", f"No tab with id: {args[0]}")
            return dict(tab)
        if name == "tabs.query":
            return [dict(t) for t in self.tabs.values()]
        if name == "permissions.contains":
            return self.site_access
        if name in ("indicator.show", "indicator.hide"):
            return True
        if name == "downloads.download":
            download_id = len(self.downloads) + 1
            self.downloads[download_id] = {"id": download_id, "url": args[0]["url"], "state": "complete",
                                           "filename": f"/home/u/Downloads/{args[0].get('filename') or 'file.bin'}",
                                           "fileSize": 12, "bytesReceived": 12, "totalBytes": 12}
            return download_id
        if name == "tabs.create":
            tab_id = max(self.tabs) + 1
            self.tabs[tab_id] = {"id": tab_id, "url": args[0].get("url", ""), "status": "complete", "windowId": 1}
            return dict(self.tabs[tab_id])
        if name == "tabs.remove":
            self.tabs.pop(args[0], None)
            return None
        if name == "guard.follow":
            return dict(self.followed) if self.followed is not None else {"outcome": "page", "url": args[1]}
        if name == "downloads.search":
            found = self.downloads.get(args[0].get("id"))
            return [found] if found else []
        raise ToolFailure("unsupported", f"extension API {name} is not available to the host")

    async def content(self, tab_id: int, tool: str, params: dict[str, Any], *, write: bool,
                      deadline_ms: int = 15_000, frame_id: int = 0) -> Any:
        self.calls.append((f"content:{tool}", (tab_id, params)))
        if not self.site_access:
            raise ToolFailure("host_permission_required", f"cannot run in tab {tab_id}", phase="precheck")
        assert tool == "wait_for" and params.get("timeMs") == 0
        page = self.text.get(tab_id, "")
        wanted = params.get("text") or params.get("textGone")
        present = wanted in page
        if present == ("text" in params):
            return {"resultText": "held"}
        raise ToolFailure(ToolCode.TIMEOUT, "not yet", phase="settle", retryable=True)

    async def install_guard(self, rules: list[Any], *, timeout: float = 10.0) -> Any:
        return await self.install_guard_now(rules, timeout=timeout)

    def install_guard_now(self, rules: list[Any], *, timeout: float = 10.0) -> "asyncio.Future[Any]":
        self.calls.append(("guard.install", (len(rules),)))  # sent before this returns, as the real one
        done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        done.set_result({"installed": len(rules)})
        return done

    def names(self) -> list[str]:
        """The names of the calls made so far, content calls as `content:<tool>`."""
        return [name for name, _ in self.calls]
