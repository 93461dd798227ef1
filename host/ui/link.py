"""Extension pages on the native link: `ui.connect` / `ui.op` / `ui.disconnect` frames in,
`ui.event` frames out.

Each page's Port is one client. Only our own extension's pages are served (the sender URL must
be `chrome-extension://<our id>/...`); ops from an unknown or refused port get an error event.
Thread events go to the pages subscribed to the thread; approvals, alerts and thread list
changes go to every initialized page.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from protocol import ui
from protocol.messages import UiConnect, UiDisconnect, UiEvent, UiOp

from host.engine.views import to_wire
from host.ui.client import Client

log = logging.getLogger("tabwarden.engine")

MAX_CLIENTS = 64
EVERY_PAGE = frozenset({"approval.request", "approval.resolved", "interaction.request", "interaction.resolved",
                        "alert.raised", "thread.created", "thread.deleted", "thread.updated", "activity.updated"})


def refusal(message: Any, info: Any) -> UiEvent | None:
    """The answer to a page's op the host could not take (`Endpoint`'s `refuse`): an `overloaded`
    error event for that page, naming the op's submission so the page can retry it."""
    if not isinstance(message, UiOp):
        return None
    submission = message.op.get("submissionId")
    event = ui.ErrorEvent(submission_id=submission if isinstance(submission, str) else None, code=info.code,
                          message=info.message, retryable=True)
    return UiEvent(client_id=message.client_id, event=to_wire(event))


class UiLink:
    def __init__(self, endpoint: Callable[[], Any], extension_id: str | None,
                 handle: Callable[[Client, Any], Any] | None):
        self._endpoint = endpoint
        self._origin = f"chrome-extension://{extension_id}/" if extension_id else None
        self._handle = handle  # the op server's `handle`, or None when the engine is unavailable
        self.clients: dict[str, Client] = {}
        self.unavailable_reason = "the engine is not available"

    def serve(self, handle: Callable[[Client, Any], Any]) -> None:
        """Serve ops with `handle` from now on (the engine came up after the link)."""
        self._handle = handle

    def _send(self, port_id: str, event: Any) -> None:
        endpoint = self._endpoint()
        if endpoint is None or not endpoint.is_open:
            return
        try:
            endpoint.send(UiEvent(client_id=port_id, event=to_wire(event)))
        except Exception as exc:  # Disconnected, a full queue: the page resyncs with thread.subscribe
            log.warning("dropping %s for page %s: %s", type(event).__name__, port_id[:8], exc)

    async def receive(self, message: Any) -> None:
        """Take one UI frame from the browser."""
        if isinstance(message, UiConnect):
            self._connect(message)
        elif isinstance(message, UiDisconnect):
            self.clients.pop(message.client_id, None)
        elif isinstance(message, UiOp):
            client = self.clients.get(message.client_id)
            if client is None:
                self._send(message.client_id, ui.ErrorEvent(code="not_initialized",
                                                            message="this page is not connected to the engine"))
                return
            if self._handle is None:
                submission = message.op.get("submissionId") if isinstance(message.op.get("submissionId"), str) else None
                self._send(message.client_id, ui.ErrorEvent(submission_id=submission, code="storage_unavailable",
                                                            message=self.unavailable_reason))
                return
            await self._handle(client, message.op)

    def _connect(self, message: UiConnect) -> None:
        if self._origin is not None and not message.sender_url.startswith(self._origin):
            log.warning("refusing a UI port from %s", message.sender_url[:200])
            self._send(message.client_id, ui.ErrorEvent(code="invalid_command",
                                                        message="only Tabwarden's own pages may use the engine"))
            return
        if len(self.clients) >= MAX_CLIENTS:
            self._send(message.client_id, ui.ErrorEvent(code="overloaded", message=f"{MAX_CLIENTS} pages are open"))
            return
        port_id = message.client_id
        self.clients[port_id] = Client(lambda event: self._send(port_id, event), name=message.page)

    def sink(self, event: Any, thread_id: str | None) -> None:
        """EventBus sink: deliver to the pages that should see `event`."""
        if not self.clients:
            return
        everyone = thread_id is None or ui.tag_of(type(event)) in EVERY_PAGE
        for client in list(self.clients.values()):
            if client.key is not None and (everyone or client.wants(thread_id)):
                client.send(event)
