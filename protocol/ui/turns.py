"""Turns and their runs: submitting, steering, queueing and resuming them, the run view, and the
events a turn streams (start, items, usage, completion).

A run is the durable unit of work behind a turn; `RunState` is its state machine's vocabulary.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

import msgspec

from protocol.ui.common import Count, Epoch, Id, Shape, StreamCursor, SubmissionId, UiMessage
from protocol.ui.user_input import TurnOverrides, UserInput

StopReason = Literal["end", "max_tokens", "content_filter", "refusal", "interrupted", "error", "budget_pause"]
ItemKind = Literal["user_message", "assistant_message", "reasoning", "tool_call", "approval", "system_notice"]
RunState = Literal[
    "queued", "preparing", "streaming_model", "waiting_approval", "waiting_interaction", "executing_tool",
    "paused_budget", "paused_uncertain", "interrupted", "failed", "completed",
]
STOP_REASONS: tuple[str, ...] = get_args(StopReason)
ITEM_KINDS: tuple[str, ...] = get_args(ItemKind)
RUN_STATES: tuple[str, ...] = get_args(RunState)


# ---------------------------------------------------------------- ops (page → engine)


class TurnSubmit(UiMessage, tag="turn.submit", kw_only=True):
    submission_id: SubmissionId
    thread_id: Id
    input: UserInput
    overrides: TurnOverrides | None = None


class TurnFork(UiMessage, tag="turn.fork", kw_only=True):
    """Edit and resubmit: a new user message beside `sibling_of_node_id`, then a turn on it."""

    submission_id: SubmissionId
    thread_id: Id
    sibling_of_node_id: Id
    input: UserInput
    overrides: TurnOverrides | None = None


class TurnSteer(UiMessage, tag="turn.steer", kw_only=True):
    """Add input to the running turn; the model reads it before its next call."""

    submission_id: SubmissionId
    thread_id: Id
    expected_turn_id: Id
    input: UserInput


class TurnEnqueue(UiMessage, tag="turn.enqueue", kw_only=True):
    submission_id: SubmissionId
    thread_id: Id
    input: UserInput
    overrides: TurnOverrides | None = None


class TurnInterrupt(UiMessage, tag="turn.interrupt", kw_only=True):
    submission_id: SubmissionId
    thread_id: Id


class QueueUpdate(UiMessage, tag="queue.update", kw_only=True):
    submission_id: SubmissionId
    thread_id: Id
    run_id: Id
    input: UserInput
    overrides: TurnOverrides | None = None


class QueueRemove(UiMessage, tag="queue.remove", kw_only=True):
    submission_id: SubmissionId
    thread_id: Id
    run_id: Id


class RunResume(UiMessage, tag="run.resume", kw_only=True):
    submission_id: SubmissionId
    thread_id: Id
    run_id: Id


class RunResolveUncertain(UiMessage, tag="run.resolveUncertain", kw_only=True):
    """Settle a run that died while a write may have happened: run it again, treat it as done,
    or fail it."""

    submission_id: SubmissionId
    thread_id: Id
    run_id: Id
    resolution: Literal["retry", "mark_done", "fail"]


class ArtifactDownload(UiMessage, tag="artifact.download", kw_only=True):
    """Save an artifact (a file the model wrote, named in its tool result's
    `details.artifact.artifactId`) into the user's downloads folder."""

    submission_id: SubmissionId
    artifact_id: Id


# ---------------------------------------------------------------- views


class PendingToolView(Shape, kw_only=True):
    call_id: str
    tool: str
    params: dict[str, Any] = {}
    target_origin: str = ""
    effects: str = "read"
    recovery: str = "retry-safe"
    started_at: Epoch | None = None


class RunView(Shape, kw_only=True):
    run_id: Id
    state: RunState
    revision: Count
    created_at: Epoch
    turn_id: str | None = None
    input_text: str = ""
    pending_tool: PendingToolView | None = None
    stop_reason: StopReason | None = None
    error: str | None = None


class Usage(Shape, kw_only=True):
    input: Count = 0
    output: Count = 0
    cache_read: Count | None = None
    cache_write: Count | None = None


class ItemMeta(Shape, kw_only=True):
    tool_name: str | None = None
    label: str | None = None
    params_summary: str | None = None
    level: str | None = None
    notice_kind: str | None = None


class ItemDeltaBody(Shape, kw_only=True):
    text: str | None = None
    reasoning: str | None = None
    tool_progress: str | None = None


class ItemResult(Shape, kw_only=True):
    ok: bool
    text: str | None = None
    code: str | None = None
    details: dict[str, Any] | None = None


# ---------------------------------------------------------------- events (engine → page)


class TurnStart(UiMessage, tag="turn.start", kw_only=True):
    thread_id: Id
    turn_id: Id
    run_id: Id
    turn_kind: Literal["user", "title"] = "user"
    steerable: bool = True
    stream: StreamCursor


class TurnComplete(UiMessage, tag="turn.complete", kw_only=True):
    thread_id: Id
    turn_id: Id
    run_id: Id
    stop_reason: StopReason
    stream: StreamCursor


class TokenUsage(UiMessage, tag="token.usage", kw_only=True):
    thread_id: Id
    turn_id: Id
    usage: Usage
    cost_usd: float | None = None
    stream: StreamCursor


class ItemStart(UiMessage, tag="item.start", kw_only=True):
    thread_id: Id
    turn_id: Id
    item_id: Id
    kind: ItemKind
    meta: ItemMeta = msgspec.field(default_factory=ItemMeta)
    stream: StreamCursor


class ItemDelta(UiMessage, tag="item.delta", kw_only=True):
    thread_id: Id
    item_id: Id
    delta: ItemDeltaBody
    stream: StreamCursor


class ItemComplete(UiMessage, tag="item.complete", kw_only=True):
    thread_id: Id
    item_id: Id
    result: ItemResult | None = None
    stream: StreamCursor


class QueueUpdated(UiMessage, tag="queue.updated", kw_only=True):
    thread_id: Id
    pending: list[RunView] = []
    stream: StreamCursor


class RunRecoveryRequired(UiMessage, tag="run.recovery_required", kw_only=True):
    """A run died while a write may have taken effect; the user must resolve it."""

    thread_id: Id
    run: RunView
    message: str
    stream: StreamCursor
