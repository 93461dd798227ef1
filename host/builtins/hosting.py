"""The built-ins inside a host process: the executor the engine is built with (built-ins in
front of the browser gateway), and the page indicator's pause and stop wired to the engine."""

from __future__ import annotations

import logging
from typing import Any

from host.builtins.executor import BuiltinExecutor

log = logging.getLogger("tabwarden.builtins")

PAUSED = "Paused from the page indicator. Send a message to continue."
STOPPED = "Stopped from the page indicator."


def build_executor(services: Any) -> BuiltinExecutor:
    """The host's executor: built-ins, then the browser gateway's tools."""
    from host.engine.gateway_executor import GatewayExecutor

    gateway = services.gateway
    return BuiltinExecutor(GatewayExecutor(gateway), gateway=gateway)


def connect(services: Any, executor: BuiltinExecutor, engine: Any) -> None:
    """Attach the engine, and route the indicator's `browser.event`s to it."""
    from protocol.messages import BrowserEvent

    executor.attach(engine)
    if executor.indicator is not None:
        executor.indicator.on_action = lambda thread_id, action: indicator_action(engine, thread_id, action)
        services.listen(BrowserEvent, executor.indicator.on_event)


async def indicator_action(engine: Any, thread_id: str, action: str) -> None:
    """Pause or stop a thread's turn from the page: a notice in the thread, then an interrupt
    (the turn ends; its conversation stays, and a new message continues it)."""
    from host.engine.records import NoticeBody

    if not engine.store.has_thread(thread_id):
        return
    text = PAUSED if action == "pause" else STOPPED
    runner = engine.runners.get(thread_id)
    turn_id = runner.turn_id if runner is not None else None
    with engine.store.transaction() as conn:
        node = engine.store.append_node(conn, thread_id, "system_notice",
                                        NoticeBody(notice_kind="paused" if action == "pause" else "stopped", text=text),
                                        turn_id=turn_id)
    engine.emit_item(thread_id, turn_id or "", node.id, "system_notice", text=text,
                     notice_kind="paused" if action == "pause" else "stopped")
    await engine.interrupt(thread_id, reason=f"indicator:{action}")
