"""The running engine behind a control connection, for the control methods that act through it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocol.errors import ErrorCode
from host.control.errors import ControlError

if TYPE_CHECKING:
    from host.control.server import ControlConnection


def running_engine(conn: "ControlConnection") -> Any:
    """The host's engine; a ControlError when the host has none (not_ready) or it failed to start."""
    services = getattr(conn.server.host, "services", None)
    if services is None:
        raise ControlError(ErrorCode.NOT_READY, "this host has no engine")
    hosted = services.engine
    if hosted.engine is None:
        raise ControlError(ErrorCode.INTERNAL, f"the engine is unavailable: {hosted.error}")
    return hosted.engine
