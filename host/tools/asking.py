"""Questions a running tool call puts to the user (an MCP server's elicitation): the engine sets
where they go before a call runs, as it does for progress, and a runner that is asked something
(`ask(request)`) waits for the user's answer. The sink is a context variable, so a runner needs
no engine; without one (the REPL, a test) nobody can answer and the runner says so.

An answer is {"kind": "submit", "value": …} | {"kind": "cancel", "note"?: "decline"} |
{"kind": "timeout"}.

Beside it, the model sink: a running tool's request for a model answer (an MCP server's
sampling), made with the thread's own connection once the user allowed it."""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any, Awaitable, Callable

Asker = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]

_sink: ContextVar[Asker | None] = ContextVar("tool_questions", default=None)


def question_sink() -> Asker | None:
    """Who answers the running call's questions (None: nobody). Capture it where the call
    starts: callbacks from other tasks do not see the caller's context."""
    return _sink.get()


def set_question_sink(sink: Asker | None) -> object:
    """Send the questions of calls made from this context to `sink`; returns the token for
    `reset_question_sink`."""
    return _sink.set(sink)


def reset_question_sink(token: object) -> None:
    """Undo `set_question_sink`."""
    _sink.reset(token)  # type: ignore[arg-type]


Sampler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
_models: ContextVar[Sampler | None] = ContextVar("tool_sampling", default=None)


def model_sink() -> Sampler | None:
    """Who answers the running call's model requests (None: no model here)."""
    return _models.get()


def set_model_sink(sink: Sampler | None) -> object:
    """Send the model requests of calls made from this context to `sink`; returns the token for
    `reset_model_sink`."""
    return _models.set(sink)


def reset_model_sink(token: object) -> None:
    """Undo `set_model_sink`."""
    _models.reset(token)  # type: ignore[arg-type]
