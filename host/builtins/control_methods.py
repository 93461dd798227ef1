"""Control-socket methods for the built-ins (the REPL: `await tw.call("memory.list")`, ...).

    memory.list          {query?}                          -> entries (key, value, source, times)
    memory.set           {key, value}                      -> the entry (written by "user")
    memory.delete        {key}                             -> {deleted}
    memory.clear         {}                                -> {cleared: n}
    artifacts.list       {thread_id}                       -> the thread's artifacts (no content)
    artifacts.get        {artifact_id}                     -> the artifact with its text
    artifacts.download   {artifact_id}                     -> the browser saves it: {downloadId, ...}
    interactions.list    {thread_id?}                      -> pending interactions (what the run waits on)

`interactions.answer` goes through the op server: host.ui.control_methods.

Every bad input is refused with a structured error and changes nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import msgspec

from protocol.errors import ErrorCode
from host.control.engine_access import running_engine as _engine
from host.control.params import parse_params as _params

if TYPE_CHECKING:
    from host.control.server import ControlConnection, ControlServer

Name = Annotated[str, msgspec.Meta(min_length=1, max_length=512)]


class _Query(msgspec.Struct, forbid_unknown_fields=True):
    query: Annotated[str, msgspec.Meta(max_length=200)] | None = None


class _Set(msgspec.Struct, forbid_unknown_fields=True):
    key: Annotated[str, msgspec.Meta(min_length=1, max_length=100)]
    value: Annotated[str, msgspec.Meta(max_length=4000)]


class _Key(msgspec.Struct, forbid_unknown_fields=True):
    key: Annotated[str, msgspec.Meta(min_length=1, max_length=100)]


class _Nothing(msgspec.Struct, forbid_unknown_fields=True):
    pass


class _Thread(msgspec.Struct, forbid_unknown_fields=True):
    thread_id: Name


class _MaybeThread(msgspec.Struct, forbid_unknown_fields=True):
    thread_id: Name | None = None


class _Artifact(msgspec.Struct, forbid_unknown_fields=True):
    artifact_id: Name


def _error(code: str, message: str, details: dict[str, Any] | None = None) -> Exception:
    from host.control.server import ControlError

    return ControlError(code, message, details or {})


def _memory(conn: "ControlConnection") -> Any:
    from host.builtins.memory import MemoryStore

    engine = _engine(conn)
    builtins = engine.tools.services.get("builtins") if engine is not None else None
    if builtins is not None and builtins.memory is not None:
        return builtins.memory
    services = conn.server.host.services
    if services.store is None:
        raise _error(ErrorCode.INTERNAL, f"the store is unavailable: {services.store_error}")
    return MemoryStore(services.store)


def _refused(exc: Any) -> Exception:
    return _error(ErrorCode.INVALID_MESSAGE, exc.message, {"reason": exc.code})


def _memory_changed(conn: "ControlConnection") -> None:
    # An open settings page follows changes made from the REPL too.
    from host.builtins.memory_state import broadcast_memory

    broadcast_memory(_engine(conn))


# ---------------------------------------------------------------- memory


async def memory_list(params: dict[str, Any], conn: "ControlConnection") -> Any:
    """Every memory (or those matching `query`)."""
    p = _params(_Query, params)
    return [e.wire() for e in _memory(conn).entries(p.query)]


async def memory_set(params: dict[str, Any], conn: "ControlConnection") -> Any:
    """Create or replace a memory as the user (within the configured limits)."""
    from host.builtins.memory import MemoryRefused
    from host.builtins.settings import load_settings

    p = _params(_Set, params)
    settings = load_settings()
    try:
        entry = _memory(conn).put(p.key, p.value, source="user", max_entries=settings.memory_max_entries,
                                  max_value_chars=settings.memory_max_value_chars)
    except MemoryRefused as exc:
        raise _refused(exc) from None
    _memory_changed(conn)
    return entry.wire()


async def memory_delete(params: dict[str, Any], conn: "ControlConnection") -> Any:
    """Forget one memory."""
    from host.builtins.memory import MemoryRefused

    p = _params(_Key, params)
    try:
        deleted = _memory(conn).delete(p.key)
    except MemoryRefused as exc:
        raise _refused(exc) from None
    _memory_changed(conn)
    return {"deleted": deleted}


async def memory_clear(params: dict[str, Any], conn: "ControlConnection") -> Any:
    """Forget every memory."""
    _params(_Nothing, params)
    cleared = _memory(conn).clear()
    _memory_changed(conn)
    return {"cleared": cleared}


# ---------------------------------------------------------------- artifacts


def _artifact(conn: "ControlConnection", artifact_id: str, *, content: bool) -> Any:
    from host.engine.store import NotFound

    try:
        return _engine(conn).store.attachment(artifact_id, content=content)
    except NotFound:
        raise _error(ErrorCode.NOT_FOUND, f"no artifact {artifact_id!r}") from None


async def artifacts_list(params: dict[str, Any], conn: "ControlConnection") -> Any:
    """A thread's artifacts, oldest first (without their content)."""
    from host.builtins.artifacts import wire

    p = _params(_Thread, params)
    engine = _engine(conn)
    if not engine.store.has_thread(p.thread_id):
        raise _error(ErrorCode.NOT_FOUND, f"no thread {p.thread_id!r}")
    return [wire(row) for row in engine.store.attachments(p.thread_id)]


async def artifacts_get(params: dict[str, Any], conn: "ControlConnection") -> Any:
    """One artifact with its text."""
    from host.builtins.artifacts import wire

    p = _params(_Artifact, params)
    row = _artifact(conn, p.artifact_id, content=True)
    return {**wire(row), "text": row.content.decode("utf-8", errors="replace")}


async def artifacts_download(params: dict[str, Any], conn: "ControlConnection") -> Any:
    """Have the browser save an artifact into the downloads folder."""
    from host.tools.failure import ToolFailure
    from host.builtins import artifacts

    p = _params(_Artifact, params)
    row = _artifact(conn, p.artifact_id, content=True)
    bridge = conn.server.host.services.gateway.bridge
    try:
        download_id = await artifacts.offer(bridge, row)
    except ToolFailure as failure:
        raise _error(failure.code, failure.message) from None
    return {**artifacts.wire(row), "downloadId": download_id}


# ---------------------------------------------------------------- interactions


async def interactions_list(params: dict[str, Any], conn: "ControlConnection") -> Any:
    """What runs wait on: pending interactions (of one thread, or all), with their time left."""
    from host.engine.views import pending_interaction, to_wire

    p = _params(_MaybeThread, params)
    engine = _engine(conn)
    stored = [to_wire(pending_interaction(row, engine.clock())) for row in engine.interactions.pending(p.thread_id)]
    return stored + [to_wire(view) for view in engine.tool_questions.views(p.thread_id)]


def register(server: "ControlServer") -> None:
    """Serve the built-ins' methods on `server`."""
    server.register("memory.list", memory_list)
    server.register("memory.set", memory_set)
    server.register("memory.delete", memory_delete)
    server.register("memory.clear", memory_clear)
    server.register("artifacts.list", artifacts_list)
    server.register("artifacts.get", artifacts_get)
    server.register("artifacts.download", artifacts_download)
    server.register("interactions.list", interactions_list)
