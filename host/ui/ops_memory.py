"""Memory ops from the settings page:

    memory.list        → memory.state (read only)
    memory.set         → ack, then memory.state to every page      (source: user)
    memory.delete      → ack, then memory.state to every page
    memory.clear       → ack, then memory.state to every page

A refused change (a bad key, a value over the limit, a full memory) is answered with its code
and changes nothing.
"""

from __future__ import annotations

from typing import Any

from protocol import ui

from host.builtins.memory_state import broadcast_memory, memory_of, memory_state
from host.ui.client import Client
from host.ui.op_context import OpContext


def _changed(ctx: OpContext, client: Client, op: Any, mark: str, action) -> Any:
    from host.builtins.memory import MemoryRefused

    try:
        action(memory_of(ctx.engine))
    except MemoryRefused as exc:
        return ctx.reject(client, op, mark, exc.code, exc.message)
    response = ctx.commit(client, op, mark, lambda conn: ctx.ack(op))
    broadcast_memory(ctx.engine)
    return response


def memory_list(ctx: OpContext, client: Client, op: ui.MemoryList, mark: str) -> Any:
    """memory.list: every memory (or those matching `query`)."""
    return memory_state(ctx.engine, op.submission_id, op.query)


def memory_set(ctx: OpContext, client: Client, op: ui.MemorySet, mark: str) -> Any:
    """memory.set: create or replace a memory as the user."""
    from host.builtins.settings import load_settings

    settings = load_settings()
    return _changed(ctx, client, op, mark, lambda memory: memory.put(
        op.key, op.value, source="user", max_entries=settings.memory_max_entries,
        max_value_chars=settings.memory_max_value_chars))


def memory_delete(ctx: OpContext, client: Client, op: ui.MemoryDelete, mark: str) -> Any:
    """memory.delete: forget one memory (forgetting one that is not there is fine)."""
    return _changed(ctx, client, op, mark, lambda memory: memory.delete(op.key))


def memory_clear(ctx: OpContext, client: Client, op: ui.MemoryClear, mark: str) -> Any:
    """memory.clear: forget every memory."""
    return _changed(ctx, client, op, mark, lambda memory: memory.clear())
