"""Control-socket methods that read the engine and change its settings (REPL, tests, benchmarks).
`engine.op`, `engine.answer` and `engine.remove_provider` (which tells open settings pages) go
through the op server's side: host.ui.control_methods.

    engine.threads       {}                     -> thread metas, newest first
    engine.snapshot      {thread_id}            -> a thread snapshot (branch, runs, pending approvals)
    engine.approvals     {thread_id?}           -> pending approvals
    engine.status        {}                     -> epoch, running threads, live runs
    engine.set_provider  {name, kind, base_url, model, ...} -> store a provider (key in the key store)
    engine.configure     {approval_timeout_seconds?, turn_token_budget?, default_provider?, user_details?}

Events: `host.subscribe {topics: ["engine"]}` streams every engine event (all threads).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import msgspec

from protocol.errors import ErrorCode

from host.engine.views import to_wire
from host.control.engine_access import running_engine as _engine
from host.control.params import parse_params as _params

if TYPE_CHECKING:
    from host.control.server import ControlConnection, ControlServer

Name = Annotated[str, msgspec.Meta(min_length=1, max_length=512)]


class _Thread(msgspec.Struct, forbid_unknown_fields=True):
    thread_id: Name


class _MaybeThread(msgspec.Struct, forbid_unknown_fields=True):
    thread_id: Name | None = None


class _Provider(msgspec.Struct, forbid_unknown_fields=True):
    name: Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
    kind: str
    base_url: str
    model: str
    headers: dict[str, str] = {}
    api_key: Annotated[str, msgspec.Meta(max_length=4096)] | None = None
    api_key_env: str | None = None
    default: bool = True
    max_retries: int | None = None
    timeout_seconds: float | None = None
    max_tokens: int | None = None


class _Configure(msgspec.Struct, forbid_unknown_fields=True):
    approval_timeout_seconds: float | None = None
    turn_token_budget: int | None = None
    default_provider: str | None = None
    user_details: list[str] | None = None  # the user's own details (replaces the list)


async def engine_threads(params: dict[str, Any], conn: "ControlConnection") -> Any:
    """Every thread's meta, newest first."""
    from host.engine.views import thread_meta

    return [to_wire(thread_meta(t)) for t in _engine(conn).store.threads()]


async def engine_snapshot(params: dict[str, Any], conn: "ControlConnection") -> Any:
    """One thread as a page renders it."""
    from host.control.server import ControlError
    from host.engine.store import NotFound

    p = _params(_Thread, params)
    try:
        return to_wire(_engine(conn).thread_snapshot(p.thread_id))
    except NotFound as exc:
        raise ControlError(ErrorCode.NOT_FOUND, str(exc)) from None


async def engine_approvals(params: dict[str, Any], conn: "ControlConnection") -> Any:
    """The approvals waiting for an answer (of one thread, or all)."""
    from host.engine.views import pending_approval

    p = _params(_MaybeThread, params)
    engine = _engine(conn)
    return [to_wire(pending_approval(a, engine.clock())) for a in engine.approvals.pending(p.thread_id)]


async def engine_status(params: dict[str, Any], conn: "ControlConnection") -> Any:
    """The stream epoch, the threads with a running turn and every live run."""
    from host.engine.views import run_view

    engine = _engine(conn)
    return {"epoch": engine.bus.epoch, "running": sorted(engine.runners),
            "liveRuns": [dict(to_wire(run_view(r)), threadId=r.thread_id) for r in engine.store.live_runs()]}


def _update_settings(change) -> dict[str, Any]:
    from host.control.server import ControlError
    from host.config_files import ConfigFileError
    from host.providers.config import load_config, parse_config, save_config

    try:
        current = load_config().model_dump(by_alias=True, exclude_defaults=True)
        updated = parse_config(change(current))
    except ConfigFileError as exc:
        raise ControlError(ErrorCode.INVALID_MESSAGE, str(exc), {"problems": exc.problems}) from None
    path = save_config(updated)
    return {"path": str(path), "providers": sorted(updated.providers), "defaultProvider": updated.default_provider}


async def engine_set_provider(params: dict[str, Any], conn: "ControlConnection") -> Any:
    """Add or replace a provider; its key goes to the key store, never into engine.json."""
    from host.control.server import ControlError
    from host.providers.secrets import SecretError, default_key_store

    p = _params(_Provider, params)
    entry: dict[str, Any] = {"kind": p.kind, "baseUrl": p.base_url, "model": p.model, "headers": p.headers}
    for key, value in (("apiKeyEnv", p.api_key_env), ("maxRetries", p.max_retries),
                       ("timeoutSeconds", p.timeout_seconds), ("maxTokens", p.max_tokens)):
        if value is not None:
            entry[key] = value

    def change(current: dict[str, Any]) -> dict[str, Any]:
        current.setdefault("providers", {})[p.name] = entry
        if p.default:
            current["defaultProvider"] = p.name
        return current

    result = _update_settings(change)
    if p.api_key is not None:
        try:
            store = default_key_store()
            store.set(p.name, p.api_key)
        except SecretError as exc:
            raise ControlError(ErrorCode.INTERNAL, f"the key could not be stored: {exc}") from None
        result["keyStore"] = store.backend
    return result


async def engine_configure(params: dict[str, Any], conn: "ControlConnection") -> Any:
    """Change engine settings in engine.json (approval timeout, token budget, default provider)."""
    p = _params(_Configure, params)

    def change(current: dict[str, Any]) -> dict[str, Any]:
        for key, value in (("approvalTimeoutSeconds", p.approval_timeout_seconds),
                           ("turnTokenBudget", p.turn_token_budget), ("defaultProvider", p.default_provider),
                           ("userDetails", p.user_details)):
            if value is not None:
                current[key] = value
        return current

    return _update_settings(change)


def register(server: "ControlServer") -> None:
    """Serve the engine's methods on `server`."""
    server.register("engine.threads", engine_threads)
    server.register("engine.snapshot", engine_snapshot)
    server.register("engine.approvals", engine_approvals)
    server.register("engine.status", engine_status)
    server.register("engine.set_provider", engine_set_provider)
    server.register("engine.configure", engine_configure)
