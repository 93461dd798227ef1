"""The memory as pages see it (`memory.state`), and sending it to every page after a change
(a page's, the model's or the REPL's), so an open settings page never shows a stale memory."""

from __future__ import annotations

from typing import Any

from protocol import ui


def memory_of(engine: Any) -> Any:
    """The engine's memory store: its built-in tools', or one over the engine's database."""
    builtins = engine.tools.services.get("builtins")
    if builtins is not None and builtins.memory is not None:
        return builtins.memory
    from host.builtins.memory import MemoryStore

    return MemoryStore(engine.store.db)


def memory_state(engine: Any, submission_id: str | None = None, query: str | None = None) -> ui.MemoryState:
    """The memory as pages see it, with the limits in force."""
    from host.builtins.settings import load_settings

    settings = load_settings()
    entries = [ui.MemoryEntry(key=e.key, value=e.value, source=e.source, created_at=e.created_at,  # type: ignore[arg-type]
                              updated_at=e.updated_at) for e in memory_of(engine).entries(query)]
    return ui.MemoryState(submission_id=submission_id, entries=entries, max_entries=settings.memory_max_entries,
                          max_value_chars=settings.memory_max_value_chars)


def broadcast_memory(engine: Any) -> None:
    """Send every page the memory as it is now (after a page's, the model's or the REPL's change)."""
    engine.bus.broadcast(memory_state(engine))
