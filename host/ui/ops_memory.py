"""Memory ops from the settings page:

    memory.list        → memory.state (read only)
    memory.set         → ack, then memory.state to every page      (source: user)
    memory.delete      → ack, then memory.state to every page
    memory.clear       → ack, then memory.state to every page

A refused change (a bad key, a value over the limit, a full memory) is answered with its code
and changes nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocol import ui

from host.builtins.memory_state import broadcast_memory, memory_of, memory_state

if TYPE_CHECKING:
    from host.ui.commands import Client, Commands


def _changed(cmd: "Commands", client: "Client", op: Any, mark: str, action) -> Any:
    from host.builtins.memory import MemoryRefused

    try:
        action(memory_of(cmd.engine))
    except MemoryRefused as exc:
        return cmd.reject(client, op, mark, exc.code, exc.message)
    response = cmd.commit(client, op, mark, lambda conn: cmd.ack(op))
    broadcast_memory(cmd.engine)
    return response


def memory_list(cmd: "Commands", client: "Client", op: ui.MemoryList, mark: str) -> Any:
    """memory.list: every memory (or those matching `query`)."""
    return memory_state(cmd.engine, op.submission_id, op.query)


def memory_set(cmd: "Commands", client: "Client", op: ui.MemorySet, mark: str) -> Any:
    """memory.set: create or replace a memory as the user."""
    from host.builtins.settings import load_settings

    settings = load_settings()
    return _changed(cmd, client, op, mark, lambda memory: memory.put(
        op.key, op.value, source="user", max_entries=settings.memory_max_entries,
        max_value_chars=settings.memory_max_value_chars))


def memory_delete(cmd: "Commands", client: "Client", op: ui.MemoryDelete, mark: str) -> Any:
    """memory.delete: forget one memory (forgetting one that is not there is fine)."""
    return _changed(cmd, client, op, mark, lambda memory: memory.delete(op.key))


def memory_clear(cmd: "Commands", client: "Client", op: ui.MemoryClear, mark: str) -> Any:
    """memory.clear: forget every memory."""
    return _changed(cmd, client, op, mark, lambda memory: memory.clear())
