"""Progress of the running tool call, for its card: the engine sets where progress goes before a
call runs, and a runner that hears of progress (an MCP server's `notifications/progress`)
reports it as one short line. The sink is a context variable, so a runner needs no engine."""

from __future__ import annotations

from contextvars import ContextVar
from typing import Callable

MAX_LINE = 200

_sink: ContextVar[Callable[[str], None] | None] = ContextVar("tool_progress", default=None)


def progress_sink() -> Callable[[str], None] | None:
    """Where the running call's progress goes (None: nobody is listening). Capture it where the
    call starts: callbacks from other tasks do not see the caller's context."""
    return _sink.get()


def set_progress_sink(sink: Callable[[str], None] | None) -> object:
    """Send the progress of calls made from this context to `sink`; returns the token for
    `reset_progress_sink`."""
    return _sink.set(sink)


def reset_progress_sink(token: object) -> None:
    """Undo `set_progress_sink`."""
    _sink.reset(token)  # type: ignore[arg-type]
