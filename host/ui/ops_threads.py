"""Thread ops: create, subscribe (snapshot), delete, fork (a copy of a branch), select a branch;
and what the thread list shows of a thread beside its title (`listed`, `listing_changed`)."""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlsplit

import msgspec

from protocol import ui

from host.engine import runs
from host.engine.store import NotFound
from host.store.db import StoreError
from host.ui.client import Client
from host.ui.op_context import OpContext

log = logging.getLogger("tabwarden.engine")


def thread_create(ctx: OpContext, client: Client, op: ui.ThreadCreate, mark: str) -> Any:
    """thread.create: a new thread (with its policy); the creating page is subscribed."""
    engine = ctx.engine
    created: dict[str, Any] = {}

    def write(conn):
        thread = engine.store.create_thread(conn, title=op.title or "", policy=op.permission_policy)
        created["thread"] = thread
        return ctx.ack(op, thread_id=thread.id, revision=thread.revision)

    response = ctx.commit(client, op, mark, write)
    thread = created["thread"]
    client.subscribe(thread.id)
    from host.engine.views import thread_meta

    engine.bus.emit(ui.ThreadCreated, thread.id, meta=thread_meta(thread))
    if op.permission_policy:
        engine.gatekeeper.set_thread_policy(thread.id, op.permission_policy)
    return response


def thread_subscribe(ctx: OpContext, client: Client, op: ui.ThreadSubscribe, mark: str) -> Any:
    """thread.subscribe: the thread's snapshot, then its live events."""
    engine = ctx.engine
    if not engine.store.has_thread(op.thread_id):
        return ui.CommandRejected(submission_id=op.submission_id, code="thread_not_found",
                                  message=f"no thread {op.thread_id!r}", thread_id=op.thread_id)
    client.subscribe(op.thread_id)
    engine.bus.flush(op.thread_id)
    snapshot = engine.thread_snapshot(op.thread_id)
    snapshot.meta = listed(engine, snapshot.meta)
    return ui.ThreadSnapshotEvent(thread_id=op.thread_id, submission_id=op.submission_id, snapshot=snapshot,
                                  stream=engine.bus.current(op.thread_id))


def thread_delete(ctx: OpContext, client: Client, op: ui.ThreadDelete, mark: str) -> Any:
    """thread.delete: the thread, its tree, runs and requests, and its grants (refused while busy)."""
    engine = ctx.engine
    missing = ctx.thread_missing(client, op, mark) or ctx.busy(client, op, mark, "delete it")
    if missing is not None:
        return missing
    def write(conn):
        engine.store.delete_thread(conn, op.thread_id)
        return ctx.ack(op, thread_id=op.thread_id)

    response = ctx.commit(client, op, mark, write)
    try:
        engine.gatekeeper.clear_thread(op.thread_id)
    except Exception:
        log.warning("the gatekeeper could not forget thread %s", op.thread_id, exc_info=True)
    engine.bus.emit(ui.ThreadDeleted, op.thread_id)
    return response


def thread_fork(ctx: OpContext, client: Client, op: ui.ThreadFork, mark: str) -> Any:
    """thread.fork: a new thread holding a copy of the branch up to `atNodeId`."""
    engine = ctx.engine
    missing = ctx.thread_missing(client, op, mark)
    if missing is not None:
        return missing
    try:
        node = engine.store.node(op.at_node_id)
    except NotFound:
        node = None
    if node is None or node.thread_id != op.thread_id:
        return ctx.reject(client, op, mark, "node_not_found", f"no node {op.at_node_id!r} in this thread")
    source = engine.store.thread(op.thread_id)
    path = engine.store.path(op.thread_id, op.at_node_id)
    made: dict[str, Any] = {}

    def write(conn):
        thread = engine.store.create_thread(conn, title=f"{source.title} (fork)", policy=source.policy,
                                            parent_thread_id=source.id)
        parent = None
        for original in path:
            copy = engine.store.append_node(conn, thread.id, original.kind, original.body, turn_id=original.turn_id,
                                            parent_id=parent)
            parent = copy.id
        made["thread"] = engine.store.thread(thread.id, conn)
        return ctx.ack(op, thread_id=thread.id, revision=made["thread"].revision)

    response = ctx.commit(client, op, mark, write)
    new = made["thread"]
    from host.engine.views import thread_meta

    client.subscribe(new.id)
    engine.bus.emit(ui.ThreadForked, op.thread_id, new_thread_id=new.id)
    engine.bus.emit(ui.ThreadCreated, new.id, meta=thread_meta(new))
    return response


def thread_select_branch(ctx: OpContext, client: Client, op: ui.ThreadSelectBranch, mark: str) -> Any:
    """thread.selectBranch: the newest leaf under `nodeId` becomes the thread's leaf."""
    engine = ctx.engine
    missing = ctx.thread_missing(client, op, mark) or ctx.busy(client, op, mark, "switch branches")
    if missing is not None:
        return missing
    try:
        node = engine.store.node(op.node_id)
    except NotFound:
        node = None
    if node is None or node.thread_id != op.thread_id:
        return ctx.reject(client, op, mark, "node_not_found", f"no node {op.node_id!r} in this thread")
    leaf = engine.store.newest_leaf_under(op.thread_id, op.node_id)
    revision: dict[str, int] = {}

    def write(conn):
        revision["value"] = engine.store.set_leaf(conn, op.thread_id, leaf)
        return ctx.ack(op, thread_id=op.thread_id, node_id=leaf, revision=revision["value"])

    response = ctx.commit(client, op, mark, write)
    engine.bus.emit(ui.ThreadUpdated, op.thread_id, revision=revision["value"], patch=ui.ThreadPatch(leaf_id=leaf))
    return response


def consent_remove(ctx: OpContext, client: Client, op: ui.ConsentRemove, mark: str) -> Any:
    """consent.remove: take one commit of the task's consent back (it asks again from then on)."""
    engine = ctx.engine
    missing = ctx.thread_missing(client, op, mark)
    if missing is not None:
        return missing
    try:
        removed = (engine.remove_card_grant(op.thread_id, op.item_id) if op.item_id.startswith("card:")
                   else engine.provenance.remove_consent(op.thread_id, op.item_id))
    except Exception as exc:  # the store failed: nothing was taken back, and the user is told
        log.warning("consent of %s not changed", op.thread_id, exc_info=True)
        return ctx.reject(client, op, mark, "storage_unavailable", f"the consent could not be changed: {exc}")
    if not removed:
        return ctx.reject(client, op, mark, "invalid_command", f"this task's consent holds no {op.item_id!r}")
    engine.consent_changed(op.thread_id)
    return ctx.commit(client, op, mark, lambda conn: ctx.ack(op, thread_id=op.thread_id))


# -- what the thread list shows -------------------------------------------------------------------


def listed(engine: Any, meta: ui.ThreadMeta) -> ui.ThreadMeta:
    """`meta` with what the thread list shows beside the title: the site of the tab the thread's
    first task was sent from, how many tasks were sent to it (queued ones too; not those taken
    off the queue) and its scope lock. Unchanged when the thread's runs cannot be read."""
    try:
        sent = [r for r in engine.store.runs(meta.id) if r.turn_id or r.state == runs.QUEUED]
    except StoreError:
        log.warning("the runs of thread %s cannot be read for the thread list", meta.id, exc_info=True)
        return meta
    site = next((found for found in map(_site_of, sent) if found), "")
    return msgspec.structs.replace(meta, site=site, turns=len(sent), scope_lock=_lock_of(engine, meta.id))


def listing_changed(engine: Any, thread_id: str) -> None:
    """Tell every page what the thread list now shows of the thread (after a task was sent to it
    or taken off its queue, or its scope lock changed)."""
    from host.engine.views import thread_meta

    try:
        meta = listed(engine, thread_meta(engine.store.thread(thread_id)))
    except (NotFound, StoreError):
        return  # deleted meanwhile, or unreadable: the next snapshot says
    engine.bus.emit(ui.ThreadUpdated, thread_id, revision=meta.revision,
                    patch=ui.ThreadPatch(site=meta.site, turns=meta.turns, scope_lock=meta.scope_lock))


def _site_of(run: Any) -> str:
    """The host (with a port other than the scheme's) of the web page a run was sent from, or ""."""
    browser = run.input.get("browserContext") if isinstance(run.input, dict) else None
    tab = browser.get("defaultTab") if isinstance(browser, dict) else None
    url = tab.get("url") if isinstance(tab, dict) else None
    if not isinstance(url, str):
        return ""
    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port
    except ValueError:
        return ""
    if parts.scheme not in ("http", "https") or not host:
        return ""
    host = f"[{host}]" if ":" in host else host
    return f"{host}:{port}" if port else host


def _lock_of(engine: Any, thread_id: str) -> list[str]:
    try:
        lock = engine.gatekeeper.scope_lock(thread_id)
    except Exception:  # GatekeeperUnavailable: the list shows no lock it cannot read
        log.warning("the scope lock of thread %s cannot be read for the thread list", thread_id, exc_info=True)
        return []
    return [p.text for p in lock.patterns] if lock is not None else []
