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
from host.ui.opqueue import OpQueues, Overloaded
from host.engine.store import NotFound
from host.engine.views import to_wire
from host.store.db import StoreError

log = logging.getLogger("tabwarden.engine")

RECEIPT_TTL_S = 24 * 3600.0
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
            response = HANDLERS[kind](self, client, op, mark)
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

    # -- helpers for the handlers ---------------------------------------------------------------

    def commit(self, client: Client, op: Any, mark: str, write: Callable[[Any], Any]) -> Any:
        """Run `write(conn)` and store the receipt of its answer in the same transaction."""
        with self.engine.store.transaction() as conn:
            response = write(conn)
            self.put_receipt(conn, client, op, mark, response)
        return response

    def put_receipt(self, conn: Any, client: Client, op: Any, mark: str, response: Any) -> None:
        """Store `response` as the answer to (client, op.submissionId) inside `conn`'s transaction."""
        self.engine.store.put_receipt(conn, client.key, op.submission_id, ui.tag_of(type(op)), mark,
                                      to_wire(response), RECEIPT_TTL_S)

    def reject(self, client: Client, op: Any, mark: str, code: str, message: str) -> Any:
        """A refusal; stored as the command's answer unless it is transient."""
        response = ui.CommandRejected(submission_id=op.submission_id, code=code, message=message,
                                      thread_id=getattr(op, "thread_id", None))
        if code in TRANSIENT_CODES:
            return response
        return self.commit(client, op, mark, lambda conn: response)

    def ack(self, op: Any, **fields: Any) -> ui.CommandAck:
        """The acknowledgement of `op`."""
        return ui.CommandAck(submission_id=op.submission_id, **fields)

    def thread_missing(self, client: Client, op: Any, mark: str) -> Any | None:
        """A `thread_not_found` refusal when `op.thread_id` does not exist, else None."""
        if not self.engine.store.has_thread(op.thread_id):
            return self.reject(client, op, mark, "thread_not_found", f"no thread {op.thread_id!r}")
        return None

    def busy(self, client: Client, op: Any, mark: str, what: str) -> Any | None:
        """A `thread_busy` refusal when a run owns the thread, else None."""
        if self.engine.busy(op.thread_id):
            return self.reject(client, op, mark, "thread_busy",
                                f"a turn is running or paused in this thread; interrupt it before you {what}")
        return None


def _handlers() -> dict[str, Callable[..., Any]]:
    from host.ui import ops_answers, ops_artifacts, ops_mcp, ops_memory, ops_threads, ops_turns, settings_ops

    return {
        "thread.create": ops_threads.thread_create,
        "thread.subscribe": ops_threads.thread_subscribe,
        "thread.delete": ops_threads.thread_delete,
        "thread.fork": ops_threads.thread_fork,
        "thread.selectBranch": ops_threads.thread_select_branch,
        "turn.submit": ops_turns.turn_submit,
        "turn.enqueue": ops_turns.turn_enqueue,
        "turn.fork": ops_turns.turn_fork,
        "turn.steer": ops_turns.turn_steer,
        "turn.interrupt": ops_turns.turn_interrupt,
        "queue.update": ops_turns.queue_update,
        "queue.remove": ops_turns.queue_remove,
        "run.resume": ops_turns.run_resume,
        "run.resolveUncertain": ops_turns.run_resolve_uncertain,
        "approval.response": ops_answers.approval_response,
        "interaction.response": ops_answers.interaction_response,
        **settings_ops.HANDLERS,
        "memory.list": ops_memory.memory_list,
        "memory.set": ops_memory.memory_set,
        "memory.delete": ops_memory.memory_delete,
        "memory.clear": ops_memory.memory_clear,
        "artifact.download": ops_artifacts.artifact_download,
        "mcp.get": ops_mcp.mcp_get,
        "mcp.saveServer": ops_mcp.mcp_save_server,
        "mcp.removeServer": ops_mcp.mcp_remove_server,
        "mcp.setToken": ops_mcp.mcp_set_token,
        "mcp.refresh": ops_mcp.mcp_refresh,
    }


HANDLERS = _handlers()
"""Op type -> handler(commands, client, op, fingerprint) returning the op's answer."""
