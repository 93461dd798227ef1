"""What the engine stores: thread, node, run and wait rows, and the typed bodies of nodes.

Node bodies are JSON in `eng_nodes.body`; each kind has its Struct here, decoded when a prompt
is built or a snapshot sent, so a malformed stored body fails loudly instead of being guessed at.
"""

from __future__ import annotations

from typing import Any

import msgspec

NODE_KINDS = ("user_message", "assistant_message", "tool_call", "tool_result", "approval_decision",
              "system_notice", "turn_context")


class _Body(msgspec.Struct, rename="camel", omit_defaults=True, kw_only=True):
    pass


class UserBody(_Body, kw_only=True):
    text: str
    # Context blocks the user attached (protocol.ui.ContextBlock as plain JSON).
    context: list[dict[str, Any]] = []
    # The trusted line describing the tab the user was on when submitting.
    environment: str | None = None
    # That tab's title and URL as its page set them: the model reads them fenced, never in our line.
    environment_page: dict[str, str] | None = None
    steer: bool = False


class CallRef(_Body, kw_only=True):
    """A tool call inside an assistant message: the engine's stable id and what the model asked."""

    id: str
    name: str
    arguments: dict[str, Any] | None = None
    # Set when the model's arguments were not a JSON object (the call then fails validation).
    raw_arguments: str | None = None
    provider_id: str = ""
    # What the provider requires back with this call (opaque; sent only to the same provider).
    echo: dict[str, Any] | None = None


class AssistantBody(_Body, kw_only=True):
    text: str = ""
    reasoning: str = ""
    calls: list[CallRef] = []
    stop_reason: str = "end"
    step: int = 0
    provider: str = ""
    model: str = ""
    usage: dict[str, int] = {}
    # What the provider requires back with this message (opaque; sent only to the same provider).
    echo: dict[str, Any] | None = None


class ToolCallBody(_Body, kw_only=True):
    call_id: str
    tool: str
    params: dict[str, Any] = {}
    label: str = ""
    level: str = ""
    effects: str = "read"
    step: int = 0
    ordinal: int = 0


class ToolResultBody(_Body, kw_only=True):
    call_id: str
    tool: str
    ok: bool
    text: str
    # ok | failed | denied | declined | cancelled | timed_out | interrupted | uncertain
    outcome: str
    # Counted towards the failure breaker (denials and declines are not).
    counted: bool = False
    code: str | None = None
    trust: str = "trusted"
    provenance: str = "tool"
    origin: str = ""
    fingerprint: str = ""
    details: dict[str, Any] = {}


class DecisionBody(_Body, kw_only=True):
    approval_id: str
    item_id: str  # the tool_call node the approval was about
    decision: dict[str, Any]
    by: str = "user"
    decided_at: float = 0.0
    # The values from content the card showed (an IBAN, a site a link leads to): accepting it
    # makes them the user's for the rest of the task.
    shown_values: list[str] = []
    # Those of them the card showed as typed into a payment field: value -> the field's kind
    # (theirs in that kind of field only).
    field_values: dict[str, str] = {}


class NoticeBody(_Body, kw_only=True):
    notice_kind: str  # reminder | stuck | final | paused | recovery | error | alert
    text: str
    # Whether the model reads it (reminders do; UI-only notices do not).
    to_model: bool = False
    # What the notice is about (the repeated call's fingerprint for `stuck`).
    key: str | None = None


BODY_TYPES: dict[str, type[_Body]] = {
    "user_message": UserBody,
    "assistant_message": AssistantBody,
    "tool_call": ToolCallBody,
    "tool_result": ToolResultBody,
    "approval_decision": DecisionBody,
    "system_notice": NoticeBody,
}


class ThreadRow(msgspec.Struct, kw_only=True):
    id: str
    title: str
    created_at: float
    updated_at: float
    revision: int
    leaf_id: str | None = None
    parent_thread_id: str | None = None
    policy: str | None = None
    next_seq: int = 1


class NodeRow(msgspec.Struct, kw_only=True):
    id: str
    thread_id: str
    seq: int
    kind: str
    created_at: float
    body: Any  # one of BODY_TYPES, decoded
    parent_id: str | None = None
    turn_id: str | None = None


class PendingTool(msgspec.Struct, rename="camel", omit_defaults=True, kw_only=True):
    """The call a run is about to run (or was running): enough to decide recovery."""

    call_id: str
    node_id: str
    tool: str
    params: dict[str, Any] = {}
    target_origin: str = ""
    tab_id: int | None = None
    effects: str = "read"
    recovery: str = "retry-safe"
    approval_id: str | None = None
    approved_revision: str | None = None
    # Set just before dispatch: a run found in executing_tool with this set may have acted.
    started_at: float | None = None


class RunRow(msgspec.Struct, kw_only=True):
    id: str
    thread_id: str
    state: str
    revision: int
    queue_order: int
    input: dict[str, Any]
    created_at: float
    updated_at: float
    turn_id: str | None = None
    overrides: dict[str, Any] | None = None
    anchor_id: str | None = None
    pending_tool: PendingTool | None = None
    step: int = 0
    tokens_used: int = 0
    stop_reason: str | None = None
    error: str | None = None


class WaitRow(msgspec.Struct, kw_only=True):
    """A request a run waits on: an approval (`answer` is the decision) or an interaction (a
    question to the user, a watch, a scheduled resume; `answer` is the response)."""

    id: str
    thread_id: str
    run_id: str
    turn_id: str
    item_id: str  # the tool_call node it is about
    request: dict[str, Any]
    status: str  # pending | settled
    requested_at: float
    deadline_at: float
    answer: dict[str, Any] | None = None
    answered_by: str | None = None
    answered_at: float | None = None


class AttachmentRow(msgspec.Struct, kw_only=True):
    """A file kept with a thread (`source`: artifact). `content` is only loaded when asked for."""

    id: str
    thread_id: str
    name: str
    mime: str
    size: int
    source: str
    created_at: float
    item_id: str | None = None
    content: bytes | None = None


def encode(value: Any) -> str:
    """Compact JSON text for a column."""
    return msgspec.json.encode(value).decode()


def decode_body(kind: str, text: str) -> Any:
    """A node body of `kind`, typed (unknown kinds stay plain JSON)."""
    body_type = BODY_TYPES.get(kind)
    return msgspec.json.decode(text, type=body_type) if body_type is not None else msgspec.json.decode(text)
