"""A CDP transport for unit tests: records every command, answers from per-method handlers,
and delivers events and detaches on demand (as the extension's bridge would)."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any, Callable

from host.cdp.domains import is_page_write

Handler = Callable[[dict[str, Any], str | None], Any]


class FakeTransport:
    """The debugger bridge as the CDP client sees it: `handlers[method]` answers a command (a
    value, or an awaitable); a method without a handler answers {}."""

    def __init__(self) -> None:
        self.sent: list[tuple[int, str | None, str, dict[str, Any]]] = []
        self.handlers: dict[str, Handler] = {}
        self.cancelled: list[str] = []
        self._on_event: Any = None
        self._on_detached: Any = None

    def connect(self, on_event, on_detached) -> None:
        self._on_event = on_event
        self._on_detached = on_detached

    async def command(self, tab_id: int, session_id: str | None, method: str, params: dict[str, Any], *,
                      timeout: float, result_type: Any = Any, trim: str | None = None) -> Any:
        self.sent.append((tab_id, session_id, method, dict(params)))
        handler = self.handlers.get(method)
        try:
            answer = handler(params, session_id) if handler is not None else {}
            if inspect.isawaitable(answer):
                answer = await answer
        except asyncio.CancelledError:
            self.cancelled.append(method)
            raise
        return answer

    def event(self, tab_id: int, method: str, params: dict[str, Any] | None = None, session_id: str | None = None) -> None:
        """Deliver a CDP event, as the bridge does."""
        self._on_event(tab_id, session_id, method, params or {})

    def detach(self, tab_id: int, reason: str) -> None:
        """Report that the debugger detached from a tab, as the bridge does."""
        self._on_detached(tab_id, reason)

    def methods(self) -> list[str]:
        """The methods of every command sent so far, in order."""
        return [method for _, _, method, _ in self.sent]

    def writes(self) -> list[str]:
        """Every DOM.* write and Input.* command sent so far."""
        return [method for method in self.methods() if is_page_write(method)]


async def forever(params: dict[str, Any], session_id: str | None) -> Any:
    """A handler that never answers (to test timeouts and cancellation)."""
    await asyncio.Event().wait()
