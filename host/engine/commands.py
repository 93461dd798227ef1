"""UI ops in: validation, command identity, per-thread ordering, and one handler per op.

Command identity: a page's `clientId` (from `initialize`) plus the op's `submissionId`. The
receipt stores the op type, a SHA-256 fingerprint of the canonical op without its submission
id, and the answer. An identical op sent again gets the stored answer (`replayed: true`) and
changes nothing; a different op under the same id is rejected. Ops that change state commit
their change and their receipt in one transaction, so an ack means "durable".

Bad input never changes state: an op that fails validation is rejected with the path of the
bad field (`Expected str, got int - at $.threadId`).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from typing import Any

import msgspec

from protocol import ui
from protocol.errors import ProtocolError
from protocol.limits import UI_OP_LIMITS, check_value

from host.engine import runs
from host.engine.approvals import AlreadyDecided
from host.engine.opqueue import OpQueues, Overloaded
from host.engine.records import ToolResultBody, UserBody
from host.engine.store import NotFound
from host.engine.views import to_wire
from host.store.db import StoreError

log = logging.getLogger("tabwarden.engine")

RECEIPT_TTL_S = 24 * 3600.0
MAX_QUEUED_TURNS = 8
UNRECEIPTED = ("initialize", "ping", "thread.subscribe")
# Refusals that say nothing about the command itself: a retry with the same id may succeed.
TRANSIENT_CODES = frozenset({"overloaded", "storage_unavailable", "internal", "not_initialized"})


class Client:
    """Someone who sends ops and receives events: an extension page or a control connection."""

    def __init__(self, send: Callable[[Any], None], *, key: str | None = None, everything: bool = False,
                 name: str = ""):
        self.key = key  # the command-identity key; None until `initialize`
        self.send = send
        self.everything = everything  # control clients see every thread's events
        self.name = name
        self.subscriptions: set[str] = set()

    def subscribe(self, thread_id: str) -> None:
        """Receive the events of `thread_id` from now on."""
        self.subscriptions.add(thread_id)

    def wants(self, thread_id: str | None) -> bool:
        """Whether an event of `thread_id` (None: for everyone) goes to this client."""
        return thread_id is None or self.everything or thread_id in self.subscriptions


def fingerprint(raw: dict[str, Any]) -> str:
    """SHA-256 of the op's canonical JSON without its submission id."""
    body = {k: v for k, v in raw.items() if k != "submissionId"}
    return hashlib.sha256(msgspec.json.encode(body, order="sorted")).hexdigest()


class Commands:
    def __init__(self, engine: Any):
        self.engine = engine
        self.queues = OpQueues()

    async def close(self) -> None:
        """Stop the op workers (pending ops are dropped)."""
        await self.queues.close()

    # -- entry ----------------------------------------------------------------------------------

    async def handle(self, client: Client, raw: Any) -> None:
        """Validate one op and queue it behind the earlier ops of its thread."""
        submission = raw.get("submissionId") if isinstance(raw, dict) else None
        submission = submission if isinstance(submission, str) and 0 < len(submission) <= 128 else None
        try:
            if not isinstance(raw, dict):
                raise msgspec.ValidationError("Expected `object` - at `$`")
            check_value(raw, UI_OP_LIMITS)
            op = msgspec.convert(raw, ui.UiOpMessage)
        except (msgspec.ValidationError, ProtocolError) as exc:
            text = exc.message if isinstance(exc, ProtocolError) else str(exc)
            if submission is not None:
                client.send(ui.CommandRejected(submission_id=submission, code="invalid_command", message=text))
            else:
                client.send(ui.ErrorEvent(code="invalid_command", message=text))
            return
        if isinstance(op, ui.Initialize):
            self._initialize(client, op)
            return
        if isinstance(op, ui.PingOp):
            client.send(ui.PongEvent(submission_id=op.submission_id))
            return
        if client.key is None:
            client.send(ui.CommandRejected(submission_id=op.submission_id, code="not_initialized",
                                           message="send initialize first"))
            return
        key = self._queue_key(op)
        try:
            self.queues.submit(key, lambda: self._run(client, op, raw))
        except Overloaded as exc:
            client.send(ui.CommandRejected(submission_id=op.submission_id, code="overloaded", message=str(exc),
                                           thread_id=getattr(op, "thread_id", None)))

    def _queue_key(self, op: Any) -> str:
        thread_id = getattr(op, "thread_id", None)
        if thread_id:
            return thread_id
        try:
            if isinstance(op, ui.ApprovalResponse):
                return self.engine.store.approval(op.approval_id).thread_id
            if isinstance(op, ui.InteractionResponse):
                return self.engine.store.interaction(op.interaction_id).thread_id
        except (NotFound, StoreError):
            return ""
        return ""

    def _initialize(self, client: Client, op: ui.Initialize) -> None:
        from protocol.schema import schema_hash

        current = schema_hash()
        if op.protocol != ui.ENGINE_PROTOCOL or op.schema_hash != current:
            client.send(ui.ReloadRequired(submission_id=op.submission_id, protocol=ui.ENGINE_PROTOCOL,
                                          schema_hash=current,
                                          message=f"this page speaks {op.protocol} ({op.schema_hash[:12]}…), the host "
                                                  f"{ui.ENGINE_PROTOCOL} ({current[:12]}…): reload the extension"))
            return
        if client.key is None or client.key.startswith("ui:"):
            client.key = f"ui:{op.client_id}"
        thread_id = op.subscribe_thread_id
        if thread_id:
            client.subscribe(thread_id)
        try:
            snapshot = self.engine.engine_snapshot(thread_id)
        except StoreError as exc:
            client.send(ui.ErrorEvent(submission_id=op.submission_id, code="storage_unavailable", message=str(exc)))
            return
        client.send(ui.Initialized(submission_id=op.submission_id, protocol=ui.ENGINE_PROTOCOL, schema_hash=current,
                                   snapshot=snapshot))

    async def _run(self, client: Client, op: Any, raw: dict[str, Any]) -> None:
        kind = ui.tag_of(type(op))
        mark = fingerprint(raw)
        store = self.engine.store
        try:
            if kind not in UNRECEIPTED:
                stored = store.receipt(client.key, op.submission_id)
                if stored is not None:
                    client.send(self._replay(op, kind, mark, stored))
                    return
            handler = getattr(self, "_op_" + kind.replace(".", "_"))
            response = handler(client, op, mark)
            if hasattr(response, "__await__"):
                response = await response
        except StoreError as exc:
            log.error("op %s failed on storage: %s", kind, exc)
            response = ui.CommandRejected(submission_id=op.submission_id, code="storage_unavailable",
                                          message=f"storage failed; nothing changed: {exc}")
        except runs.InvalidTransition as exc:
            response = ui.CommandRejected(submission_id=op.submission_id, code="invalid_state", message=str(exc))
        except Exception as exc:
            log.exception("op %s failed", kind)
            response = ui.CommandRejected(submission_id=op.submission_id, code="internal",
                                          message=f"{type(exc).__name__}: {exc}")
        if response is not None:
            client.send(response)

    def _replay(self, op: Any, kind: str, mark: str, stored: Any) -> Any:
        if stored["op_type"] != kind or stored["fingerprint"] != mark:
            return ui.CommandRejected(submission_id=op.submission_id, code="invalid_command",
                                      message=f"submission id {op.submission_id!r} was already used for a different "
                                              f"command ({stored['op_type']})")
        answer = msgspec.json.decode(stored["response"])
        answer["replayed"] = True
        return msgspec.convert(answer, ui.UiEventMessage)

    # -- helpers --------------------------------------------------------------------------------

    def _commit(self, client: Client, op: Any, mark: str, write: Callable[[Any], Any]) -> Any:
        """Run `write(conn)` and store the receipt of its answer in the same transaction."""
        store = self.engine.store
        with store.transaction() as conn:
            response = write(conn)
            store.put_receipt(conn, client.key, op.submission_id, ui.tag_of(type(op)), mark, to_wire(response),
                              RECEIPT_TTL_S)
        return response

    def _reject(self, client: Client, op: Any, mark: str, code: str, message: str) -> Any:
        response = ui.CommandRejected(submission_id=op.submission_id, code=code, message=message,
                                      thread_id=getattr(op, "thread_id", None))
        if code in TRANSIENT_CODES:
            return response
        return self._commit(client, op, mark, lambda conn: response)

    def _ack(self, op: Any, **fields: Any) -> ui.CommandAck:
        return ui.CommandAck(submission_id=op.submission_id, **fields)

    def _thread_missing(self, client: Client, op: Any, mark: str) -> Any | None:
        if not self.engine.store.has_thread(op.thread_id):
            return self._reject(client, op, mark, "thread_not_found", f"no thread {op.thread_id!r}")
        return None

    def _busy(self, client: Client, op: Any, mark: str, what: str) -> Any | None:
        if self.engine.busy(op.thread_id):
            return self._reject(client, op, mark, "thread_busy",
                                f"a turn is running or paused in this thread; interrupt it before you {what}")
        return None

    # -- threads --------------------------------------------------------------------------------

    def _op_thread_create(self, client: Client, op: ui.ThreadCreate, mark: str) -> Any:
        engine = self.engine
        created: dict[str, Any] = {}

        def write(conn):
            thread = engine.store.create_thread(conn, title=op.title or "", policy=op.permission_policy)
            created["thread"] = thread
            return self._ack(op, thread_id=thread.id, revision=thread.revision)

        response = self._commit(client, op, mark, write)
        thread = created["thread"]
        client.subscribe(thread.id)
        from host.engine.views import thread_meta

        engine.bus.emit(ui.ThreadCreated, thread.id, meta=thread_meta(thread))
        if op.permission_policy:
            engine.gatekeeper.set_thread_policy(thread.id, op.permission_policy)
        return response

    def _op_thread_subscribe(self, client: Client, op: ui.ThreadSubscribe, mark: str) -> Any:
        engine = self.engine
        if not engine.store.has_thread(op.thread_id):
            return ui.CommandRejected(submission_id=op.submission_id, code="thread_not_found",
                                      message=f"no thread {op.thread_id!r}", thread_id=op.thread_id)
        client.subscribe(op.thread_id)
        engine.bus.flush(op.thread_id)
        return ui.ThreadSnapshotEvent(thread_id=op.thread_id, submission_id=op.submission_id,
                                      snapshot=engine.thread_snapshot(op.thread_id),
                                      stream=engine.bus.current(op.thread_id))

    def _op_thread_delete(self, client: Client, op: ui.ThreadDelete, mark: str) -> Any:
        engine = self.engine
        missing = self._thread_missing(client, op, mark) or self._busy(client, op, mark, "delete it")
        if missing is not None:
            return missing
        def write(conn):
            engine.store.delete_thread(conn, op.thread_id)
            return self._ack(op, thread_id=op.thread_id)

        response = self._commit(client, op, mark, write)
        try:
            engine.gatekeeper.clear_thread(op.thread_id)
        except Exception:
            log.warning("the gatekeeper could not forget thread %s", op.thread_id, exc_info=True)
        engine.bus.emit(ui.ThreadDeleted, op.thread_id)
        return response

    def _op_thread_fork(self, client: Client, op: ui.ThreadFork, mark: str) -> Any:
        engine = self.engine
        missing = self._thread_missing(client, op, mark)
        if missing is not None:
            return missing
        try:
            node = engine.store.node(op.at_node_id)
        except NotFound:
            node = None
        if node is None or node.thread_id != op.thread_id:
            return self._reject(client, op, mark, "node_not_found", f"no node {op.at_node_id!r} in this thread")
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
            return self._ack(op, thread_id=thread.id, revision=made["thread"].revision)

        response = self._commit(client, op, mark, write)
        new = made["thread"]
        from host.engine.views import thread_meta

        client.subscribe(new.id)
        engine.bus.emit(ui.ThreadForked, op.thread_id, new_thread_id=new.id)
        engine.bus.emit(ui.ThreadCreated, new.id, meta=thread_meta(new))
        return response

    def _op_thread_selectBranch(self, client: Client, op: ui.ThreadSelectBranch, mark: str) -> Any:
        engine = self.engine
        missing = self._thread_missing(client, op, mark) or self._busy(client, op, mark, "switch branches")
        if missing is not None:
            return missing
        try:
            node = engine.store.node(op.node_id)
        except NotFound:
            node = None
        if node is None or node.thread_id != op.thread_id:
            return self._reject(client, op, mark, "node_not_found", f"no node {op.node_id!r} in this thread")
        leaf = engine.store.newest_leaf_under(op.thread_id, op.node_id)
        revision: dict[str, int] = {}

        def write(conn):
            revision["value"] = engine.store.set_leaf(conn, op.thread_id, leaf)
            return self._ack(op, thread_id=op.thread_id, node_id=leaf, revision=revision["value"])

        response = self._commit(client, op, mark, write)
        engine.bus.emit(ui.ThreadUpdated, op.thread_id, revision=revision["value"], patch=ui.ThreadPatch(leaf_id=leaf))
        return response

    # -- turns ----------------------------------------------------------------------------------

    def _queue_run(self, client: Client, op: Any, mark: str, *, anchor_id: str | None = None) -> Any:
        engine = self.engine

        def write(conn):
            run = engine.store.insert_run(conn, op.thread_id, state=runs.QUEUED, input=msgspec.to_builtins(op.input),
                                          overrides=msgspec.to_builtins(op.overrides) if op.overrides else None,
                                          anchor_id=anchor_id)
            return self._ack(op, thread_id=op.thread_id, run_id=run.id)

        response = self._commit(client, op, mark, write)
        client.subscribe(op.thread_id)
        engine.start_next(op.thread_id)
        engine.queue_changed(op.thread_id)
        return response

    def _op_turn_submit(self, client: Client, op: ui.TurnSubmit, mark: str) -> Any:
        refused = self._thread_missing(client, op, mark) or self._busy(client, op, mark, "start another (or enqueue it)")
        return refused or self._queue_run(client, op, mark)

    def _op_turn_enqueue(self, client: Client, op: ui.TurnEnqueue, mark: str) -> Any:
        refused = self._thread_missing(client, op, mark)
        if refused is not None:
            return refused
        queued = self.engine.store.runs(op.thread_id, frozenset({runs.QUEUED}))
        if len(queued) >= MAX_QUEUED_TURNS:
            return self._reject(client, op, mark, "queue_full", f"{MAX_QUEUED_TURNS} turns are already queued")
        return self._queue_run(client, op, mark)

    def _op_turn_fork(self, client: Client, op: ui.TurnFork, mark: str) -> Any:
        engine = self.engine
        refused = self._thread_missing(client, op, mark) or self._busy(client, op, mark, "edit an earlier message")
        if refused is not None:
            return refused
        try:
            node = engine.store.node(op.sibling_of_node_id)
        except NotFound:
            node = None
        if node is None or node.thread_id != op.thread_id or node.kind != "user_message":
            return self._reject(client, op, mark, "node_not_found",
                                f"no user message {op.sibling_of_node_id!r} in this thread")
        return self._queue_run(client, op, mark, anchor_id=node.id)

    def _op_turn_steer(self, client: Client, op: ui.TurnSteer, mark: str) -> Any:
        engine = self.engine
        refused = self._thread_missing(client, op, mark)
        if refused is not None:
            return refused
        runner = engine.runners.get(op.thread_id)
        if runner is None or not runner.turn_id:
            return self._reject(client, op, mark, "no_active_turn", "no turn is running in this thread")
        if runner.turn_id != op.expected_turn_id:
            return self._reject(client, op, mark, "turn_mismatch",
                                f"the running turn is {runner.turn_id}, not {op.expected_turn_id}")
        run = engine.store.run(runner.run_id)
        if run.state not in (runs.PREPARING, runs.STREAMING, runs.EXECUTING, runs.WAITING_APPROVAL):
            return self._reject(client, op, mark, "turn_not_steerable", f"the turn is {run.state}")
        body = UserBody(text=op.input.text, context=msgspec.to_builtins(op.input.attached_context), steer=True)
        made: dict[str, Any] = {}

        def write(conn):
            made["node"] = engine.store.append_node(conn, op.thread_id, "user_message", body, turn_id=runner.turn_id)
            return self._ack(op, thread_id=op.thread_id, turn_id=runner.turn_id, node_id=made["node"].id)

        response = self._commit(client, op, mark, write)
        engine.emit_item(op.thread_id, runner.turn_id, made["node"].id, "user_message", text=body.text)
        return response

    async def _op_turn_interrupt(self, client: Client, op: ui.TurnInterrupt, mark: str) -> Any:
        engine = self.engine
        refused = self._thread_missing(client, op, mark)
        if refused is not None:
            return refused
        if not await engine.interrupt(op.thread_id, "user"):
            return self._reject(client, op, mark, "no_active_turn", "nothing is running in this thread")
        return self._commit(client, op, mark, lambda conn: self._ack(op, thread_id=op.thread_id))

    # -- queue and runs -------------------------------------------------------------------------

    def _queued_run(self, client: Client, op: Any, mark: str, states: frozenset[str]) -> Any:
        engine = self.engine
        refused = self._thread_missing(client, op, mark)
        if refused is not None:
            return refused, None
        try:
            run = engine.store.run(op.run_id)
        except NotFound:
            run = None
        if run is None or run.thread_id != op.thread_id:
            return self._reject(client, op, mark, "run_not_found", f"no run {op.run_id!r} in this thread"), None
        if run.state not in states:
            return self._reject(client, op, mark, "invalid_state", f"run {run.id} is {run.state}"), None
        return None, run

    def _op_queue_update(self, client: Client, op: ui.QueueUpdate, mark: str) -> Any:
        refused, run = self._queued_run(client, op, mark, frozenset({runs.QUEUED}))
        if refused is not None:
            return refused
        store = self.engine.store

        def write(conn):
            store.update_run(conn, run.id, expected_revision=run.revision, input=msgspec.to_builtins(op.input),
                             overrides=msgspec.to_builtins(op.overrides) if op.overrides else None)
            return self._ack(op, thread_id=op.thread_id, run_id=run.id)

        response = self._commit(client, op, mark, write)
        self.engine.queue_changed(op.thread_id)
        return response

    def _op_queue_remove(self, client: Client, op: ui.QueueRemove, mark: str) -> Any:
        refused, run = self._queued_run(client, op, mark, frozenset({runs.QUEUED}))
        if refused is not None:
            return refused
        store = self.engine.store

        def write(conn):
            store.update_run(conn, run.id, state=runs.INTERRUPTED, expected_revision=run.revision,
                             stop_reason="interrupted")
            return self._ack(op, thread_id=op.thread_id, run_id=run.id)

        response = self._commit(client, op, mark, write)
        self.engine.queue_changed(op.thread_id)
        return response

    def _op_run_resume(self, client: Client, op: ui.RunResume, mark: str) -> Any:
        refused, run = self._queued_run(client, op, mark, frozenset({runs.PAUSED_BUDGET}))
        if refused is not None:
            return refused
        store = self.engine.store

        def write(conn):
            store.update_run(conn, run.id, state=runs.STREAMING, expected_revision=run.revision, tokens_used=0,
                             stop_reason=None)
            return self._ack(op, thread_id=op.thread_id, run_id=run.id)

        response = self._commit(client, op, mark, write)
        self.engine.start_next(op.thread_id)
        return response

    def _op_run_resolveUncertain(self, client: Client, op: ui.RunResolveUncertain, mark: str) -> Any:
        refused, run = self._queued_run(client, op, mark, frozenset({runs.PAUSED_UNCERTAIN}))
        if refused is not None:
            return refused
        engine, store = self.engine, self.engine.store
        pending = run.pending_tool
        assert pending is not None

        def write(conn):
            if op.resolution == "retry":
                # Sent again from its checks; a fresh approval may be asked.
                store.update_run(conn, run.id, state=runs.EXECUTING, expected_revision=run.revision,
                                 pending_tool=msgspec.structs.replace(pending, started_at=None))
            else:
                done = op.resolution == "mark_done"
                text = ("The host stopped while this call was running; the user checked and confirmed it took "
                        "effect (its output is lost)." if done else
                        "The host stopped while this call was running; the user marked it as failed.")
                result = ToolResultBody(call_id=pending.call_id, tool=pending.tool, ok=done, text=text,
                                        outcome="ok" if done else "failed", code=None if done else "uncertain")
                store.append_node(conn, op.thread_id, "tool_result", result, turn_id=run.turn_id,
                                  node_id=f"{pending.node_id}:result")
                if done:
                    store.update_run(conn, run.id, state=runs.STREAMING, expected_revision=run.revision,
                                     pending_tool=None)
                else:
                    store.update_run(conn, run.id, state=runs.FAILED, expected_revision=run.revision,
                                     pending_tool=None, stop_reason="error", error="the user failed an uncertain call")
            return self._ack(op, thread_id=op.thread_id, run_id=run.id)

        response = self._commit(client, op, mark, write)
        try:
            engine.gatekeeper.record_outcome(thread_id=op.thread_id, tool=pending.tool,
                                             outcome=f"uncertain:{op.resolution}", target_origin=pending.target_origin,
                                             turn_id=run.turn_id, call_id=pending.node_id)
        except Exception:
            log.warning("the resolution of run %s could not be audited", run.id, exc_info=True)
        if op.resolution == "fail" and run.turn_id:
            engine.bus.emit(ui.TurnComplete, op.thread_id, turn_id=run.turn_id, run_id=run.id, stop_reason="error")
        engine.start_next(op.thread_id)
        return response

    # -- answers to requests --------------------------------------------------------------------

    def _op_approval_response(self, client: Client, op: ui.ApprovalResponse, mark: str) -> Any:
        engine = self.engine
        try:
            approval = engine.store.approval(op.approval_id)
        except NotFound:
            return self._reject(client, op, mark, "approval_not_found", f"no approval {op.approval_id!r}")
        decision = msgspec.to_builtins(op.decision)
        ack = self._ack(op, thread_id=approval.thread_id, run_id=approval.run_id)
        store = engine.store

        def receipt(conn, settled):
            store.put_receipt(conn, client.key, op.submission_id, "approval.response", mark, to_wire(ack),
                              RECEIPT_TTL_S)

        try:
            settled = engine.approvals.decide(op.approval_id, decision, "user", receipt=receipt)
        except AlreadyDecided as exc:
            prior = exc.settled
            return self._reject(client, op, mark, "already_decided",
                                f"Approval {op.approval_id} was already decided with a different decision "
                                f"({prior.kind}, by {prior.by}).")
        if settled.newly and approval.run_id not in {r.run_id for r in engine.runners.values()}:
            engine.start_next(approval.thread_id)
        return ack

    def _op_interaction_response(self, client: Client, op: ui.InteractionResponse, mark: str) -> Any:
        from host.engine.interactions import AlreadyAnswered

        engine = self.engine
        try:
            asked = engine.store.interaction(op.interaction_id)
        except NotFound:
            return self._reject(client, op, mark, "invalid_state", f"no interaction {op.interaction_id!r}")
        ack = self._ack(op, thread_id=asked.thread_id, run_id=asked.run_id)
        store = engine.store

        def receipt(conn):
            store.put_receipt(conn, client.key, op.submission_id, "interaction.response", mark, to_wire(ack),
                              RECEIPT_TTL_S)

        try:
            answered = engine.interactions.answer(op.interaction_id, msgspec.to_builtins(op.response), "user",
                                                  receipt=receipt)
        except AlreadyAnswered as exc:
            return self._reject(client, op, mark, "already_decided",
                                f"Interaction {op.interaction_id} was already answered ({exc.answered.kind}, "
                                f"by {exc.answered.by}).")
        if answered.newly and asked.run_id not in {r.run_id for r in engine.runners.values()}:
            engine.start_next(asked.thread_id)
        return ack
