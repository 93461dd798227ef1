"""The UI op/event catalogue: what extension pages send to the engine and what it sends back.

Pages talk to the service worker over a runtime Port; the worker wraps each op in a `ui.op`
frame and unwraps `ui.event` frames. This module fixes the names of every op and event and
the shapes the engine relies on first (handshake, acknowledgements, approval decisions);
the engine issue fills in the remaining payload shapes under the same names.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

import msgspec

ENGINE_PROTOCOL = "tabwarden/engine-v1"

SubmissionId = Annotated[str, msgspec.Meta(min_length=1, max_length=128)]
Id = Annotated[str, msgspec.Meta(min_length=1, max_length=512)]

OP_TYPES: tuple[str, ...] = (
    "initialize",
    "thread.create",
    "thread.subscribe",
    "thread.delete",
    "thread.fork",
    "thread.selectBranch",
    "turn.submit",
    "turn.fork",
    "turn.steer",
    "turn.enqueue",
    "turn.interrupt",
    "queue.update",
    "queue.remove",
    "run.resume",
    "run.resolveUncertain",
    "approval.response",
    "interaction.response",
    "ping",
)

EVENT_TYPES: tuple[str, ...] = (
    # responses
    "initialized",
    "fatal.reload_required",
    "command.ack",
    "command.rejected",
    "pong",
    "error",
    # threads and turns
    "thread.created",
    "thread.forked",
    "thread.deleted",
    "turn.start",
    "turn.complete",
    "token.usage",
    # items
    "item.start",
    "item.delta",
    "item.complete",
    # requests to the user
    "approval.request",
    "interaction.request",
    # broadcasts
    "thread.updated",
    "queue.updated",
    "run.recovery_required",
    "tabs.updated",
    "activity.updated",
    "alert.raised",
)

STOP_REASONS = ("end", "max_tokens", "content_filter", "interrupted", "error", "budget_pause")

ERROR_CODES = (
    "protocol_mismatch",
    "thread_not_found",
    "turn_mismatch",
    "turn_not_steerable",
    "no_active_turn",
    "queue_full",
    "overloaded",
    "interrupted",
    "provider_error",
    "not_configured",
    "invalid_command",
    "internal",
)

PERMISSION_POLICIES = ("always", "untrusted", "auto")
APPROVAL_FLAGS = ("sensitive_payload", "escalation_l2", "host_permission", "guarded_origin", "credential_target")


class _Ui(msgspec.Struct, tag_field="type", rename="camel", omit_defaults=True, forbid_unknown_fields=True, kw_only=True):
    pass


# ---------------------------------------------------------------- ops (page → engine)


class Initialize(_Ui, tag="initialize", kw_only=True):
    submission_id: SubmissionId
    protocol: str
    schema_hash: str
    client_id: Id
    subscribe_thread_id: Id | None = None


class PingOp(_Ui, tag="ping", kw_only=True):
    submission_id: SubmissionId


class _Decision(msgspec.Struct, tag_field="kind", forbid_unknown_fields=True, kw_only=True):
    pass


class Accept(_Decision, tag="accept", kw_only=True):
    """Allow this one call."""


class AcceptForSession(_Decision, tag="acceptForSession", kw_only=True):
    """Allow this tool on this origin for the rest of the thread's browser session."""


class AcceptForSite(_Decision, tag="acceptForSite", kw_only=True):
    """Persist an allow rule for this tool on this origin."""


class Decline(_Decision, tag="decline", kw_only=True):
    note: Annotated[str, msgspec.Meta(max_length=4000)] | None = None


class CancelDecision(_Decision, tag="cancel", kw_only=True):
    """Decline and interrupt the turn."""


ApprovalDecision = Union[Accept, AcceptForSession, AcceptForSite, Decline, CancelDecision]


class ApprovalResponse(_Ui, tag="approval.response", kw_only=True):
    submission_id: SubmissionId
    approval_id: Id
    decision: ApprovalDecision


# ---------------------------------------------------------------- events (engine → page)


class Initialized(_Ui, tag="initialized", kw_only=True):
    submission_id: SubmissionId
    protocol: str
    schema_hash: str
    snapshot: dict[str, Any] | None = None


class ReloadRequired(_Ui, tag="fatal.reload_required", kw_only=True):
    submission_id: SubmissionId | None = None
    protocol: str
    schema_hash: str
    message: str


class CommandAck(_Ui, tag="command.ack", kw_only=True):
    submission_id: SubmissionId
    thread_id: Id | None = None
    run_id: Id | None = None
    revision: int | None = None


class CommandRejected(_Ui, tag="command.rejected", kw_only=True):
    submission_id: SubmissionId
    code: str
    message: str
    thread_id: Id | None = None


class PongEvent(_Ui, tag="pong", kw_only=True):
    submission_id: SubmissionId


class ErrorEvent(_Ui, tag="error", kw_only=True):
    submission_id: SubmissionId | None = None
    thread_id: Id | None = None
    code: str
    message: str
    retryable: bool = False


class ApprovalRequest(_Ui, tag="approval.request", kw_only=True):
    thread_id: Id
    turn_id: Id
    approval_id: Id
    tool: str
    label: str
    params: dict[str, Any]
    target_origin: str
    flags: list[str] = []
    # The acted-on element as the snapshot showed it, from the host-side ref map.
    target_line: str | None = None
    deadline_at: float
    stream: dict[str, int] | None = None


class AlertRaised(_Ui, tag="alert.raised", kw_only=True):
    """A denial burst or another sign that a thread may be under prompt injection."""

    thread_id: Id
    code: str
    message: str


UiOpMessage = Union[Initialize, PingOp, ApprovalResponse]
UiEventMessage = Union[
    Initialized, ReloadRequired, CommandAck, CommandRejected, PongEvent, ErrorEvent, ApprovalRequest, AlertRaised
]

DECISION_KINDS: tuple[str, ...] = tuple(
    c.__struct_config__.tag for c in ApprovalDecision.__args__  # type: ignore[attr-defined]
)
POLICY_LITERAL = Literal["always", "untrusted", "auto"]
