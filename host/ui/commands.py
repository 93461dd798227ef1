"""UI ops in: validation, command identity, per-thread ordering, and dispatch to the handler of
each op (`handlers.py`).

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
from typing import Any

import msgspec

from protocol import ui
from protocol.errors import ProtocolError
from protocol.limits import UI_OP_LIMITS, check_value

from host.calls import after_answer
from host.engine import runs
from host.engine.store import NotFound
from host.store.db import StoreError
from host.ui.client import Client
from host.ui.handlers import HANDLERS
from host.ui.op_context import OpContext
from host.ui.ops_threads import listed
from host.ui.opqueue import OpQueues, QueueFull

log = logging.getLogger("tabwarden.engine")

UNRECEIPTED = ("initialize", "ping", "thread.subscribe")


def fingerprint(raw: dict[str, Any]) -> str:
    """SHA-256 of the op's canonical JSON without its submission id."""
    body = {k: v for k, v in raw.items() if k != "submissionId"}
    return hashlib.sha256(msgspec.json.encode(body, order="sorted")).hexdigest()


class Commands:
    """The op server of one engine: pages and control clients hand it raw ops (`handle`)."""

    def __init__(self, engine: Any):
        self.engine = engine
        self.context = OpContext(engine)  # what the handlers get
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
        except QueueFull as exc:
            client.send(ui.CommandRejected(submission_id=op.submission_id, code="overloaded", message=str(exc),
                                           thread_id=getattr(op, "thread_id", None)))

    def _queue_key(self, op: Any) -> str:
        thread_id = getattr(op, "thread_id", None)
        if thread_id:
            return thread_id
        try:
            if isinstance(op, ui.ApprovalResponse):
                return self.engine.approvals.row(op.approval_id).thread_id
            if isinstance(op, ui.InteractionResponse):
                return self.engine.interactions.row(op.interaction_id).thread_id
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
            snapshot.threads = [listed(self.engine, meta) for meta in snapshot.threads]
            if snapshot.thread is not None:
                snapshot.thread.meta = listed(self.engine, snapshot.thread.meta)
        except StoreError as exc:
            client.send(ui.ErrorEvent(submission_id=op.submission_id, code="storage_unavailable", message=str(exc)))
            return
        client.send(ui.Initialized(submission_id=op.submission_id, protocol=ui.ENGINE_PROTOCOL, schema_hash=current,
                                   snapshot=snapshot))

    async def _run(self, client: Client, op: Any, raw: dict[str, Any]) -> None:
        kind = ui.tag_of(type(op))
        mark = fingerprint(raw)
        store = self.engine.store
        after_answer.flush()  # what the control requests answered before left: this op sees it done
        try:
            if kind not in UNRECEIPTED:
                stored = store.receipt(client.key, op.submission_id)
                if stored is not None:
                    client.send(self._replay(op, kind, mark, stored))
                    return
            response = HANDLERS[kind](self.context, client, op, mark)
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
