"""UI ops of the built-ins, merged into the engine's handler table (commands.HANDLERS):

    memory.list        → memory.state (read only)
    memory.set         → ack, then memory.state to every page      (source: user)
    memory.delete      → ack, then memory.state to every page
    memory.clear       → ack, then memory.state to every page
    artifact.download  → ack once the browser took the download

A refused change (a bad key, a value over the limit, a full memory, an unknown artifact) is
answered with its code and changes nothing. The model's writes and the REPL's changes send every
page `memory.state` too (`broadcast_memory`), so an open settings page never shows a stale memory.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocol import ui

if TYPE_CHECKING:
    from host.ui.commands import Client, Commands


def _memory(engine: Any) -> Any:
    found = getattr(engine.executor, "memory", None)
    if found is not None:
        return found
    from host.builtins.memory import MemoryStore

    return MemoryStore(engine.store.db)


def memory_state(engine: Any, submission_id: str | None = None, query: str | None = None) -> ui.MemoryState:
    """The memory as pages see it, with the limits in force."""
    from host.builtins.settings import load_settings

    settings = load_settings()
    entries = [ui.MemoryEntry(key=e.key, value=e.value, source=e.source, created_at=e.created_at,  # type: ignore[arg-type]
                              updated_at=e.updated_at) for e in _memory(engine).entries(query)]
    return ui.MemoryState(submission_id=submission_id, entries=entries, max_entries=settings.memory_max_entries,
                          max_value_chars=settings.memory_max_value_chars)


def broadcast_memory(engine: Any) -> None:
    """Send every page the memory as it is now (after a page's, the model's or the REPL's change)."""
    engine.bus.broadcast(memory_state(engine))


def _changed(cmd: "Commands", client: "Client", op: Any, mark: str, action) -> Any:
    from host.builtins.memory import MemoryRefused

    try:
        action(_memory(cmd.engine))
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


async def artifact_download(cmd: "Commands", client: "Client", op: ui.ArtifactDownload, mark: str) -> Any:
    """artifact.download: the browser saves the artifact into the downloads folder."""
    from host.browser.errors import ToolFailure
    from host.builtins.artifacts import offer
    from host.engine.store import NotFound

    engine = cmd.engine
    try:
        row = engine.store.attachment(op.artifact_id, content=True)
    except NotFound:
        return cmd.reject(client, op, mark, "artifact_not_found", f"no artifact {op.artifact_id!r}")
    gateway = getattr(engine.executor, "gateway", None)
    if gateway is None:
        return ui.CommandRejected(submission_id=op.submission_id, code="browser_unavailable",
                                  message="no browser is connected to save the file")
    try:
        await offer(gateway.bridge, row)
    except ToolFailure as failure:
        # Not stored: once the browser is back, the same op may succeed.
        return ui.CommandRejected(submission_id=op.submission_id, code="browser_unavailable",
                                  message=f"the browser did not take the download: {failure.message}",
                                  thread_id=row.thread_id)
    return cmd.commit(client, op, mark, lambda conn: cmd.ack(op, thread_id=row.thread_id))


HANDLERS = {
    "memory.list": memory_list,
    "memory.set": memory_set,
    "memory.delete": memory_delete,
    "memory.clear": memory_clear,
    "artifact.download": artifact_download,
}
