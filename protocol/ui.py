"""The UI op/event catalogue: what extension pages send to the engine and what it sends back.

Pages talk to the service worker over a runtime Port; the worker wraps each op in a `ui.op`
frame and unwraps `ui.event` frames. Every op carries a `submissionId`; together with the
page's own `clientId` (from `initialize`) it identifies the command, so a page may resend an
op after a reconnect and get the stored answer instead of a second effect.

Every thread-scoped event carries `stream{threadId, epoch, sequence}`: the epoch grows with
each host start, the sequence within (thread, epoch), so a page can tell a gap from a restart.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

import msgspec

ENGINE_PROTOCOL = "tabwarden/engine-v1"

SubmissionId = Annotated[str, msgspec.Meta(min_length=1, max_length=128)]
Id = Annotated[str, msgspec.Meta(min_length=1, max_length=512)]
Text = Annotated[str, msgspec.Meta(max_length=1_000_000)]
Label = Annotated[str, msgspec.Meta(max_length=500)]
Note = Annotated[str, msgspec.Meta(max_length=4000)]
Count = Annotated[int, msgspec.Meta(ge=0)]
Epoch = Annotated[float, msgspec.Meta(ge=0)]

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
    # settings (the settings page; like every op, only our own extension's pages can send them)
    "settings.get",
    "policy.setDefault",
    "policy.explain",
    "rules.add",
    "rules.remove",
    "origins.add",
    "origins.remove",
    "scope.setLock",
    "audit.query",
    "providers.save",
    "providers.verify",
    "providers.setDefault",
    # built-ins: the profile's memory (settings page) and a thread's artifacts (side panel)
    "memory.list",
    "memory.set",
    "memory.delete",
    "memory.clear",
    "artifact.download",
    # MCP servers (settings page): mcp.json and the bearer tokens in the key store
    "mcp.get",
    "mcp.saveServer",
    "mcp.removeServer",
    "mcp.setToken",
    "mcp.refresh",
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
    "thread.snapshot",
    "turn.start",
    "turn.complete",
    "token.usage",
    # items
    "item.start",
    "item.delta",
    "item.complete",
    # requests to the user
    "approval.request",
    "approval.resolved",
    "interaction.request",
    "interaction.resolved",
    # broadcasts
    "thread.updated",
    "queue.updated",
    "run.recovery_required",
    "tabs.updated",
    "activity.updated",
    "alert.raised",
    # settings
    "settings.state",
    "policy.explained",
    "audit.rows",
    "providers.verified",
    # built-ins
    "memory.state",
    # MCP servers
    "mcp.state",
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
    # added by the engine: each names one refusal the UI can explain precisely
    "not_initialized",
    "thread_busy",
    "run_not_found",
    "invalid_state",
    "approval_not_found",
    "already_decided",
    "node_not_found",
    "storage_unavailable",
    # settings refusals (the gatekeeper's and the provider settings' own codes)
    "gatekeeper_unavailable",
    "invalid_rule",
    "invalid_pattern",
    "unknown_rule",
    "rule_not_removable",
    "rule_not_allowed",
    "builtin_pattern",
    "unknown_pattern",
    "pattern_not_removable",
    "unknown_tool",
    "policy_locked",
    "invalid_policy",
    "invalid_provider",
    "provider_not_found",
    # built-ins
    "invalid_key",
    "value_too_long",
    "memory_full",
    "artifact_not_found",
    "browser_unavailable",
    # MCP servers
    "invalid_mcp_server",
    "invalid_mcp_config",
    "mcp_server_exists",
    "mcp_server_not_found",
    "mcp_unavailable",
)

PERMISSION_POLICIES = ("always", "untrusted", "auto")
APPROVAL_FLAGS = ("sensitive_payload", "escalation_l2", "host_permission", "guarded_origin", "credential_target")
ITEM_KINDS = ("user_message", "assistant_message", "reasoning", "tool_call", "approval", "system_notice")
RUN_STATES = (
    "queued", "preparing", "streaming_model", "waiting_approval", "waiting_interaction", "executing_tool",
    "paused_budget", "paused_uncertain", "interrupted", "failed", "completed",
)
TOOL_LEVELS = ("L0", "L1", "L2", "mcp", "builtin")

PolicyName = Literal["always", "untrusted", "auto"]
ToolLevel = Literal["L0", "L1", "L2", "mcp", "builtin"]
StopReason = Literal["end", "max_tokens", "content_filter", "interrupted", "error", "budget_pause"]
ItemKind = Literal["user_message", "assistant_message", "reasoning", "tool_call", "approval", "system_notice"]
RunState = Literal[
    "queued", "preparing", "streaming_model", "waiting_approval", "waiting_interaction", "executing_tool",
    "paused_budget", "paused_uncertain", "interrupted", "failed", "completed",
]


class _Ui(msgspec.Struct, tag_field="type", rename="camel", omit_defaults=True, forbid_unknown_fields=True, kw_only=True):
    pass


class _Shape(msgspec.Struct, rename="camel", omit_defaults=True, forbid_unknown_fields=True, kw_only=True):
    """A nested shape (no `type` tag)."""


# ---------------------------------------------------------------- shared shapes


class TabRef(_Shape, kw_only=True):
    tab_id: Annotated[int, msgspec.Meta(ge=0, le=2**31 - 1)]
    url: Annotated[str, msgspec.Meta(max_length=8192)] = ""
    title: Annotated[str, msgspec.Meta(max_length=1000)] = ""


class BrowserContext(_Shape, kw_only=True):
    """The tabs the page saw when the user submitted: the default tab becomes the turn's target."""

    captured_at: Annotated[int, msgspec.Meta(ge=0)] = 0
    default_tab: TabRef | None = None
    referenced_tabs: Annotated[list[TabRef], msgspec.Meta(max_length=64)] = []


class _Part(msgspec.Struct, tag_field="type", rename="camel", omit_defaults=True, forbid_unknown_fields=True,
            kw_only=True):
    pass


class TextPart(_Part, tag="text", kw_only=True):
    text: Text


class ImagePart(_Part, tag="image", kw_only=True):
    mime: Literal["image/png", "image/jpeg", "image/webp", "image/gif"]
    data: Annotated[str, msgspec.Meta(max_length=16 * 1024 * 1024)]  # base64


ContentPart = Union[TextPart, ImagePart]


class ContextBlock(_Shape, kw_only=True):
    """Context the user attached to a message (a page, a selection, a file...)."""

    kind: Literal["page", "selection", "screenshot", "tab", "mcp_resource", "file", "skill"]
    label: Label
    origin: Annotated[str, msgspec.Meta(max_length=2048)] | None = None
    trust: Literal["trusted", "untrusted"] | None = None
    provenance: Literal["user", "page", "mcp", "tool", "import", "plugin"] | None = None
    source_ref: Annotated[str, msgspec.Meta(max_length=2048)] | None = None
    tab: TabRef | None = None
    content: Annotated[list[ContentPart], msgspec.Meta(min_length=1, max_length=64)]


class UserInput(_Shape, kw_only=True):
    text: Text
    attached_context: Annotated[list[ContextBlock], msgspec.Meta(max_length=32)] = []
    browser_context: BrowserContext | None = None


class ModelRef(_Shape, kw_only=True):
    """A configured provider (`connection_id`) and optionally a model other than its default."""

    connection_id: Annotated[str, msgspec.Meta(min_length=1, max_length=128)]
    model_id: Annotated[str, msgspec.Meta(min_length=1, max_length=256)] | None = None


class TurnOverrides(_Shape, kw_only=True):
    model: ModelRef | None = None
    permission_policy: PolicyName | None = None
    enabled_tool_levels: Annotated[list[ToolLevel], msgspec.Meta(max_length=5)] | None = None


class StreamCursor(_Shape, kw_only=True):
    thread_id: Id
    epoch: Annotated[int, msgspec.Meta(ge=1)]
    sequence: Annotated[int, msgspec.Meta(ge=1)]


# ---------------------------------------------------------------- ops (page → engine)


class Initialize(_Ui, tag="initialize", kw_only=True):
    submission_id: SubmissionId
    protocol: str
    schema_hash: str
    # The page's own id (kept across reconnects): command receipts are keyed on it.
    client_id: Id
    subscribe_thread_id: Id | None = None


class PingOp(_Ui, tag="ping", kw_only=True):
    submission_id: SubmissionId


class ThreadCreate(_Ui, tag="thread.create", kw_only=True):
    submission_id: SubmissionId
    title: Label | None = None
    permission_policy: PolicyName | None = None


class ThreadSubscribe(_Ui, tag="thread.subscribe", kw_only=True):
    submission_id: SubmissionId
    thread_id: Id


class ThreadDelete(_Ui, tag="thread.delete", kw_only=True):
    submission_id: SubmissionId
    thread_id: Id


class ThreadFork(_Ui, tag="thread.fork", kw_only=True):
    """A new thread holding the path from the root to `at_node_id`."""

    submission_id: SubmissionId
    thread_id: Id
    at_node_id: Id


class ThreadSelectBranch(_Ui, tag="thread.selectBranch", kw_only=True):
    """Make the branch through `node_id` current (its newest leaf becomes the thread's leaf)."""

    submission_id: SubmissionId
    thread_id: Id
    node_id: Id


class TurnSubmit(_Ui, tag="turn.submit", kw_only=True):
    submission_id: SubmissionId
    thread_id: Id
    input: UserInput
    overrides: TurnOverrides | None = None


class TurnFork(_Ui, tag="turn.fork", kw_only=True):
    """Edit and resubmit: a new user message beside `sibling_of_node_id`, then a turn on it."""

    submission_id: SubmissionId
    thread_id: Id
    sibling_of_node_id: Id
    input: UserInput
    overrides: TurnOverrides | None = None


class TurnSteer(_Ui, tag="turn.steer", kw_only=True):
    """Add input to the running turn; the model reads it before its next call."""

    submission_id: SubmissionId
    thread_id: Id
    expected_turn_id: Id
    input: UserInput


class TurnEnqueue(_Ui, tag="turn.enqueue", kw_only=True):
    submission_id: SubmissionId
    thread_id: Id
    input: UserInput
    overrides: TurnOverrides | None = None


class TurnInterrupt(_Ui, tag="turn.interrupt", kw_only=True):
    submission_id: SubmissionId
    thread_id: Id


class QueueUpdate(_Ui, tag="queue.update", kw_only=True):
    submission_id: SubmissionId
    thread_id: Id
    run_id: Id
    input: UserInput
    overrides: TurnOverrides | None = None


class QueueRemove(_Ui, tag="queue.remove", kw_only=True):
    submission_id: SubmissionId
    thread_id: Id
    run_id: Id


class RunResume(_Ui, tag="run.resume", kw_only=True):
    submission_id: SubmissionId
    thread_id: Id
    run_id: Id


class RunResolveUncertain(_Ui, tag="run.resolveUncertain", kw_only=True):
    """Settle a run that died while a write may have happened: run it again, treat it as done,
    or fail it."""

    submission_id: SubmissionId
    thread_id: Id
    run_id: Id
    resolution: Literal["retry", "mark_done", "fail"]


class _Decision(msgspec.Struct, tag_field="kind", omit_defaults=True, forbid_unknown_fields=True, kw_only=True):
    pass


class Accept(_Decision, tag="accept", kw_only=True):
    """Allow this one call."""


class AcceptForSession(_Decision, tag="acceptForSession", kw_only=True):
    """Allow this tool on this origin for the rest of the thread's browser session."""


class AcceptForSite(_Decision, tag="acceptForSite", kw_only=True):
    """Persist an allow rule for this tool on this origin."""


class Decline(_Decision, tag="decline", kw_only=True):
    note: Note | None = None


class CancelDecision(_Decision, tag="cancel", kw_only=True):
    """Decline and interrupt the turn."""


ApprovalDecision = Union[Accept, AcceptForSession, AcceptForSite, Decline, CancelDecision]


class ApprovalResponse(_Ui, tag="approval.response", kw_only=True):
    submission_id: SubmissionId
    approval_id: Id
    decision: ApprovalDecision


class _InteractionAnswer(msgspec.Struct, tag_field="kind", omit_defaults=True, forbid_unknown_fields=True,
                         kw_only=True):
    pass


class InteractionSubmit(_InteractionAnswer, tag="submit", kw_only=True):
    value: Any = None


class InteractionCancel(_InteractionAnswer, tag="cancel", kw_only=True):
    note: Note | None = None


class InteractionTimeout(_InteractionAnswer, tag="timeout", kw_only=True):
    value: Any = None


InteractionAnswer = Union[InteractionSubmit, InteractionCancel, InteractionTimeout]


class InteractionResponse(_Ui, tag="interaction.response", kw_only=True):
    submission_id: SubmissionId
    interaction_id: Id
    response: InteractionAnswer


# ---------------------------------------------------------------- snapshot shapes


class ThreadMeta(_Shape, kw_only=True):
    id: Id
    title: str
    created_at: Epoch
    updated_at: Epoch
    revision: Count
    leaf_id: str | None = None
    parent_thread_id: str | None = None
    permission_policy: PolicyName | None = None


class NodeView(_Shape, kw_only=True):
    """One node of a thread's tree; `body` depends on `kind`."""

    id: Id
    kind: str
    seq: Count
    created_at: Epoch
    parent_id: str | None = None
    turn_id: str | None = None
    body: dict[str, Any] = {}


class PendingToolView(_Shape, kw_only=True):
    call_id: str
    tool: str
    params: dict[str, Any] = {}
    target_origin: str = ""
    effects: str = "read"
    recovery: str = "retry-safe"
    started_at: Epoch | None = None


class RunView(_Shape, kw_only=True):
    run_id: Id
    state: RunState
    revision: Count
    created_at: Epoch
    turn_id: str | None = None
    input_text: str = ""
    pending_tool: PendingToolView | None = None
    stop_reason: StopReason | None = None
    error: str | None = None


class ApprovalRequestPayload(_Shape, kw_only=True):
    """What the user is asked about: the complete parameters, where, and why it was asked."""

    tool: str
    label: str
    params: dict[str, Any]
    target_origin: str
    flags: list[str] = []
    reason: str = ""
    code: str = ""
    level: str = ""
    # The acted-on element as the latest snapshot showed it (from the host-side ref map).
    target_line: str | None = None


class PendingApproval(_Shape, kw_only=True):
    approval_id: Id
    thread_id: Id
    turn_id: Id
    item_id: Id
    request: ApprovalRequestPayload
    requested_at: Epoch
    deadline_at: Epoch
    remaining_ms: Count = 0


class PendingInteraction(_Shape, kw_only=True):
    """A question the model asked the user (ask_user) that has no answer yet."""

    interaction_id: Id
    thread_id: Id
    turn_id: Id
    item_id: Id
    request: dict[str, Any]
    requested_at: Epoch
    deadline_at: Epoch
    remaining_ms: Count = 0


class ThreadSnapshot(_Shape, kw_only=True):
    meta: ThreadMeta
    # The current branch, root first.
    nodes: list[NodeView] = []
    active_run: RunView | None = None
    queue: list[RunView] = []
    pending_approvals: list[PendingApproval] = []
    pending_interactions: list[PendingInteraction] = []
    cursor: StreamCursor | None = None


class Activity(_Shape, kw_only=True):
    thread_id: Id
    running: bool
    pending_approvals: Count = 0
    pending_interactions: Count = 0
    state: RunState | None = None


class EngineSnapshot(_Shape, kw_only=True):
    threads: list[ThreadMeta] = []
    thread: ThreadSnapshot | None = None
    activity: list[Activity] = []
    # Every approval waiting for an answer, in every thread (a page that connects after a
    # restart shows them from here: the live approval.request went out before it was there).
    pending_approvals: list[PendingApproval] = []
    pending_interactions: list[PendingInteraction] = []
    epoch: Annotated[int, msgspec.Meta(ge=0)] = 0


class Usage(_Shape, kw_only=True):
    input: Count = 0
    output: Count = 0
    cache_read: Count | None = None
    cache_write: Count | None = None


class ItemMeta(_Shape, kw_only=True):
    tool_name: str | None = None
    label: str | None = None
    params_summary: str | None = None
    level: str | None = None
    notice_kind: str | None = None


class ItemDeltaBody(_Shape, kw_only=True):
    text: str | None = None
    reasoning: str | None = None
    tool_progress: str | None = None


class ItemResult(_Shape, kw_only=True):
    ok: bool
    text: str | None = None
    code: str | None = None
    details: dict[str, Any] | None = None


class ThreadPatch(_Shape, kw_only=True):
    title: str | None = None
    leaf_id: str | None = None
    permission_policy: PolicyName | None = None
    updated_at: Epoch | None = None


# ---------------------------------------------------------------- events (engine → page)


class Initialized(_Ui, tag="initialized", kw_only=True):
    submission_id: SubmissionId
    protocol: str
    schema_hash: str
    snapshot: EngineSnapshot | None = None


class ReloadRequired(_Ui, tag="fatal.reload_required", kw_only=True):
    submission_id: SubmissionId | None = None
    protocol: str
    schema_hash: str
    message: str


class CommandAck(_Ui, tag="command.ack", kw_only=True):
    """The command is durable (not: its continuation has finished)."""

    submission_id: SubmissionId
    thread_id: Id | None = None
    run_id: Id | None = None
    turn_id: Id | None = None
    node_id: Id | None = None
    revision: int | None = None
    replayed: bool = False


class CommandRejected(_Ui, tag="command.rejected", kw_only=True):
    """The command changed nothing; `code` says why."""

    submission_id: SubmissionId
    code: str
    message: str
    thread_id: Id | None = None
    revision: int | None = None
    replayed: bool = False


class PongEvent(_Ui, tag="pong", kw_only=True):
    submission_id: SubmissionId


class ErrorEvent(_Ui, tag="error", kw_only=True):
    submission_id: SubmissionId | None = None
    thread_id: Id | None = None
    code: str
    message: str
    retryable: bool = False
    # For provider errors: auth | rate_limit | network | bad_model | bad_request | server | protocol.
    error_kind: str | None = None
    provider_details: dict[str, Any] | None = None
    stream: StreamCursor | None = None


class ThreadCreated(_Ui, tag="thread.created", kw_only=True):
    thread_id: Id
    meta: ThreadMeta
    stream: StreamCursor


class ThreadForked(_Ui, tag="thread.forked", kw_only=True):
    thread_id: Id
    new_thread_id: Id
    stream: StreamCursor


class ThreadDeleted(_Ui, tag="thread.deleted", kw_only=True):
    thread_id: Id
    stream: StreamCursor


class ThreadSnapshotEvent(_Ui, tag="thread.snapshot", kw_only=True):
    """The answer to `thread.subscribe`: the state to render before the live events after it."""

    thread_id: Id
    submission_id: SubmissionId | None = None
    snapshot: ThreadSnapshot
    stream: StreamCursor


class TurnStart(_Ui, tag="turn.start", kw_only=True):
    thread_id: Id
    turn_id: Id
    run_id: Id
    turn_kind: Literal["user", "title"] = "user"
    steerable: bool = True
    stream: StreamCursor


class TurnComplete(_Ui, tag="turn.complete", kw_only=True):
    thread_id: Id
    turn_id: Id
    run_id: Id
    stop_reason: StopReason
    stream: StreamCursor


class TokenUsage(_Ui, tag="token.usage", kw_only=True):
    thread_id: Id
    turn_id: Id
    usage: Usage
    cost_usd: float | None = None
    stream: StreamCursor


class ItemStart(_Ui, tag="item.start", kw_only=True):
    thread_id: Id
    turn_id: Id
    item_id: Id
    kind: ItemKind
    meta: ItemMeta = msgspec.field(default_factory=ItemMeta)
    stream: StreamCursor


class ItemDelta(_Ui, tag="item.delta", kw_only=True):
    thread_id: Id
    item_id: Id
    delta: ItemDeltaBody
    stream: StreamCursor


class ItemComplete(_Ui, tag="item.complete", kw_only=True):
    thread_id: Id
    item_id: Id
    result: ItemResult | None = None
    stream: StreamCursor


class ApprovalRequest(_Ui, tag="approval.request", kw_only=True):
    thread_id: Id
    turn_id: Id
    approval_id: Id
    item_id: Id
    request: ApprovalRequestPayload
    deadline_at: Epoch
    # Milliseconds left when this event was sent (the deadline is persisted, so a re-offer
    # after a restart shows what remains, not a fresh five minutes).
    remaining_ms: Count
    stream: StreamCursor


class ApprovalResolved(_Ui, tag="approval.resolved", kw_only=True):
    """An approval was settled (by a page, a timeout, an interrupt or recovery): close its card."""

    thread_id: Id
    approval_id: Id
    decision: str
    by: Literal["user", "timeout", "interrupt", "recovery"]
    stream: StreamCursor


class InteractionRequest(_Ui, tag="interaction.request", kw_only=True):
    """The run waits on the user or a condition; `request.kind` says which:
    ask_user {question, options?}; request_user_action {action, reason?, tabId?} (the user does
    it, then submits: the model learns only that it is done); watch_page {tabId, origin,
    textAppears?, textGone?, urlMatches?, note?, summary} (settled by the watcher; submit ends it
    early, cancel stops it); schedule_resume {delaySeconds, reason, summary} (continues at the
    deadline; submit resumes now). Answered with `interaction.response`."""

    thread_id: Id
    turn_id: Id
    interaction_id: Id
    item_id: Id
    request: dict[str, Any]
    deadline_at: Epoch
    remaining_ms: Count
    stream: StreamCursor


class InteractionResolved(_Ui, tag="interaction.resolved", kw_only=True):
    thread_id: Id
    interaction_id: Id
    response: str  # submit | cancel | timeout
    by: Literal["user", "timeout", "interrupt", "recovery", "watch"]  # watch: watch_page's page watcher
    stream: StreamCursor


class ThreadUpdated(_Ui, tag="thread.updated", kw_only=True):
    thread_id: Id
    revision: Count
    patch: ThreadPatch
    stream: StreamCursor


class QueueUpdated(_Ui, tag="queue.updated", kw_only=True):
    thread_id: Id
    pending: list[RunView] = []
    stream: StreamCursor


class RunRecoveryRequired(_Ui, tag="run.recovery_required", kw_only=True):
    """A run died while a write may have taken effect; the user must resolve it."""

    thread_id: Id
    run: RunView
    message: str
    stream: StreamCursor


class TabsUpdated(_Ui, tag="tabs.updated", kw_only=True):
    tabs: list[TabRef] = []


class ActivityUpdated(_Ui, tag="activity.updated", kw_only=True):
    """Sent to every page (not only a thread's subscribers), for badges and lists."""

    activity: Activity


class AlertRaised(_Ui, tag="alert.raised", kw_only=True):
    """A denial burst or another sign that a thread may be under prompt injection."""

    thread_id: Id
    code: str
    message: str
    stream: StreamCursor | None = None


# ---------------------------------------------------------------- settings (page → engine)

Pattern = Annotated[str, msgspec.Meta(min_length=1, max_length=2048)]
ProviderName = Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
OriginList = Literal["blocked", "guarded"]
Verdict = Literal["allow", "ask", "deny"]


class SettingsGet(_Ui, tag="settings.get", kw_only=True):
    """The settings page's state (answered with `settings.state`); with `thread_id`, that
    thread's scope lock and accepted origins too."""

    submission_id: SubmissionId
    thread_id: Id | None = None


class PolicySetDefault(_Ui, tag="policy.setDefault", kw_only=True):
    """The default permission policy (written to the user's policy file)."""

    submission_id: SubmissionId
    policy: PolicyName


class PolicyExplain(_Ui, tag="policy.explain", kw_only=True):
    """A what-if: how the gatekeeper would judge `tool` at `url` (not audited, runs nothing).
    Answered with `policy.explained`."""

    submission_id: SubmissionId
    tool: Annotated[str, msgspec.Meta(min_length=1, max_length=256)]
    url: Annotated[str, msgspec.Meta(max_length=8192)] = ""
    params: dict[str, Any] = {}
    thread_id: Id | None = None
    policy: PolicyName | None = None


class RulesAdd(_Ui, tag="rules.add", kw_only=True):
    """A user rule: `tool` is a name, a prefix wildcard (`mcp__*`), `category:<name>` or `*`."""

    submission_id: SubmissionId
    tool: Annotated[str, msgspec.Meta(min_length=1, max_length=256)]
    origin: Pattern
    verdict: Verdict


class RulesRemove(_Ui, tag="rules.remove", kw_only=True):
    submission_id: SubmissionId
    rule_id: Annotated[str, msgspec.Meta(min_length=1, max_length=256)]


class OriginsAdd(_Ui, tag="origins.add", kw_only=True):
    submission_id: SubmissionId
    list: OriginList
    pattern: Pattern


class OriginsRemove(_Ui, tag="origins.remove", kw_only=True):
    submission_id: SubmissionId
    list: OriginList
    pattern: Pattern


class ScopeSetLock(_Ui, tag="scope.setLock", kw_only=True):
    """Confine a thread's writes and navigations to origin patterns (None lifts the lock)."""

    submission_id: SubmissionId
    thread_id: Id
    patterns: Annotated[list[Pattern], msgspec.Meta(max_length=256)] | None = None


class AuditQuery(_Ui, tag="audit.query", kw_only=True):
    """The newest audit rows matching the filters (answered with `audit.rows`)."""

    submission_id: SubmissionId
    thread_id: Id | None = None
    tool: Annotated[str, msgspec.Meta(max_length=256)] | None = None
    verdict: Verdict | None = None
    kind: Literal["decision", "approval", "outcome", "alert"] | None = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=500)] = 100


class ProvidersSave(_Ui, tag="providers.save", kw_only=True):
    """Add or replace a provider. The key goes to the key store and is never sent back;
    omitted, the stored key stays."""

    submission_id: SubmissionId
    name: ProviderName
    kind: Literal["openai", "anthropic"]
    base_url: Annotated[str, msgspec.Meta(min_length=1, max_length=2048)]
    model: Annotated[str, msgspec.Meta(min_length=1, max_length=256)]
    api_key: Annotated[str, msgspec.Meta(max_length=4096)] | None = None
    make_default: bool = False


class ProvidersVerify(_Ui, tag="providers.verify", kw_only=True):
    """Send one small real request to the provider (answered with `providers.verified`)."""

    submission_id: SubmissionId
    name: ProviderName


class ProvidersSetDefault(_Ui, tag="providers.setDefault", kw_only=True):
    submission_id: SubmissionId
    name: ProviderName


# ---------------------------------------------------------------- settings (engine → page)


class RuleEntry(_Shape, kw_only=True):
    """A rule in force, with where it comes from and whether the page may delete it."""

    id: str
    tool: str
    origin: str
    verdict: Verdict
    source: str  # managed | user_setting | approval_persist | plugin_default
    provenance: str  # builtin | user:<path> | managed:<path> | store | injected:<name>
    removable: bool
    args: dict[str, str] | None = None
    created_at: float = 0.0
    source_thread_id: str | None = None


class OriginEntry(_Shape, kw_only=True):
    pattern: str
    origin: Literal["builtin", "file", "user"]  # built in, from a policy file, or added here
    removable: bool


class ToolEntry(_Shape, kw_only=True):
    name: str
    label: str
    level: str
    effects: str
    category: str | None = None


class ProviderEntry(_Shape, kw_only=True):
    name: str
    kind: str
    base_url: str
    model: str
    is_default: bool = False
    key: Literal["stored", "env", "none"] = "none"


class ThreadScope(_Shape, kw_only=True):
    thread_id: Id
    lock: list[str] | None = None
    accepted_origins: list[str] = []
    policy: str = ""


class SettingsSnapshot(_Shape, kw_only=True):
    default_policy: PolicyName
    # Set when the administrator's policy file fixes the default (the page shows it locked).
    policy_locked_by: str | None = None
    rules: list[RuleEntry] = []
    blocked: list[OriginEntry] = []
    guarded: list[OriginEntry] = []
    loaded_sources: list[str] = []
    revision: str = ""
    tools: list[ToolEntry] = []
    providers: list[ProviderEntry] = []
    default_provider: str | None = None
    thread: ThreadScope | None = None
    # Why part of the state could not be read (an invalid engine.json, an unavailable gatekeeper).
    problems: list[str] = []


class SettingsState(_Ui, tag="settings.state", kw_only=True):
    """The answer to `settings.get`, and sent to every page after any settings change."""

    submission_id: SubmissionId | None = None
    state: SettingsSnapshot


class TraceLine(_Shape, kw_only=True):
    step: str
    outcome: str  # hit | pass | skip
    detail: str


class PolicyExplained(_Ui, tag="policy.explained", kw_only=True):
    submission_id: SubmissionId
    tool: str
    target_origin: str
    policy: str
    verdict: Verdict
    code: str
    reason: str
    flags: list[str] = []
    findings: list[str] = []
    rule: str | None = None
    trace: list[TraceLine] = []


class AuditRow(_Shape, kw_only=True):
    seq: int
    at: float
    kind: str
    thread_id: str
    tool: str
    target_origin: str = ""
    params_redacted: Any = None
    verdict: str | None = None
    code: str | None = None
    rule: str | None = None
    flags: list[str] | None = None
    approval_decision: str | None = None
    tool_outcome: str | None = None
    detail: str | None = None


class AuditRows(_Ui, tag="audit.rows", kw_only=True):
    """Newest last."""

    submission_id: SubmissionId
    rows: list[AuditRow] = []


class ProvidersVerified(_Ui, tag="providers.verified", kw_only=True):
    submission_id: SubmissionId
    name: str
    ok: bool
    message: str
    model: str = ""
    error_kind: str | None = None
    elapsed_ms: Count = 0


# ---------------------------------------------------------------- built-ins (page → engine → page)

MemoryKey = Annotated[str, msgspec.Meta(min_length=1, max_length=100)]


class MemoryList(_Ui, tag="memory.list", kw_only=True):
    """The profile's memory (answered with `memory.state`)."""

    submission_id: SubmissionId
    query: Annotated[str, msgspec.Meta(max_length=200)] | None = None


class MemorySet(_Ui, tag="memory.set", kw_only=True):
    """Create or replace a memory (within the configured limits); every page then gets
    `memory.state`."""

    submission_id: SubmissionId
    key: MemoryKey
    value: Annotated[str, msgspec.Meta(max_length=4000)]


class MemoryDelete(_Ui, tag="memory.delete", kw_only=True):
    submission_id: SubmissionId
    key: MemoryKey


class MemoryClear(_Ui, tag="memory.clear", kw_only=True):
    submission_id: SubmissionId


class ArtifactDownload(_Ui, tag="artifact.download", kw_only=True):
    """Save an artifact (a file the model wrote, named in its tool result's
    `details.artifact.artifactId`) into the user's downloads folder."""

    submission_id: SubmissionId
    artifact_id: Id


class MemoryEntry(_Shape, kw_only=True):
    key: str
    value: str
    source: Literal["model", "user"]  # who wrote it last
    created_at: Epoch
    updated_at: Epoch


class MemoryState(_Ui, tag="memory.state", kw_only=True):
    """The answer to `memory.list`, and sent to every page after any memory change."""

    submission_id: SubmissionId | None = None
    entries: list[MemoryEntry] = []
    max_entries: Count = 0
    max_value_chars: Count = 0


# ---------------------------------------------------------------- MCP servers (settings page)

# The host checks ids and fields as it checks mcp.json (with the path of the bad field); these
# limits only bound what a page may send.
McpServerId = Annotated[str, msgspec.Meta(min_length=1, max_length=64)]


class McpGet(_Ui, tag="mcp.get", kw_only=True):
    """The configured MCP servers as they are now (answered with `mcp.state`; connects nothing)."""

    submission_id: SubmissionId


class McpSaveServer(_Ui, tag="mcp.saveServer", kw_only=True):
    """Add or edit a server in mcp.json, validated like the file; its other fields (headers,
    bearerTokenEnv, connectTimeoutSeconds) stay. `tools: null` offers every tool of the server,
    `timeoutSeconds: null` the default. With `new`, an id already in use is refused
    (`mcp_server_exists`) instead of replaced."""

    submission_id: SubmissionId
    server: McpServerId
    url: Annotated[str, msgspec.Meta(max_length=4096)]
    enabled: bool = True
    tools: Annotated[list[Annotated[str, msgspec.Meta(max_length=256)]], msgspec.Meta(max_length=1000)] | None = None
    timeout_seconds: float | None = None
    new: bool = False


class McpRemoveServer(_Ui, tag="mcp.removeServer", kw_only=True):
    """Remove a server from mcp.json; its stored bearer token is forgotten with it."""

    submission_id: SubmissionId
    server: McpServerId


class McpSetToken(_Ui, tag="mcp.setToken", kw_only=True):
    """Store a server's bearer token in the key store (`null` forgets it). Never sent back: pages
    only learn whether one is stored."""

    submission_id: SubmissionId
    server: McpServerId
    token: Annotated[str, msgspec.Meta(min_length=1, max_length=8192)] | None = None


class McpRefresh(_Ui, tag="mcp.refresh", kw_only=True):
    """Connect one server (or every enabled one) now and list its tools; answered with
    `mcp.state` once done, which every page gets too."""

    submission_id: SubmissionId
    server: McpServerId | None = None


class McpError(_Shape, kw_only=True):
    code: str
    message: str


class McpToolEntry(_Shape, kw_only=True):
    name: str  # as offered to the model: mcp__<server>__<tool>
    tool: str  # the server's own name
    label: str = ""


class McpSkippedTool(_Shape, kw_only=True):
    tool: str
    reason: str


class McpServerEntry(_Shape, kw_only=True):
    id: str
    url: str
    origin: str  # what rules, blocked origins and grants key on
    enabled: bool
    state: Literal["disabled", "connected", "failed", "idle"]
    timeout_seconds: float
    allow_list: list[str] | None = None
    header_names: list[str] = []  # never their values
    bearer_token_env: str | None = None
    token: Literal["stored", "env", "none", "unavailable"]
    last_error: McpError | None = None
    tools: list[McpToolEntry] = []
    skipped: list[McpSkippedTool] = []


class McpState(_Ui, tag="mcp.state", kw_only=True):
    """The answer to `mcp.get` and `mcp.refresh`, and sent to every page after any MCP change."""

    submission_id: SubmissionId | None = None
    servers: list[McpServerEntry] = []
    # mcp.json cannot be used (MCP is off as a whole): the problems, with their paths.
    config_error: str | None = None


UiOpMessage = Union[
    Initialize, PingOp, ThreadCreate, ThreadSubscribe, ThreadDelete, ThreadFork, ThreadSelectBranch, TurnSubmit,
    TurnFork, TurnSteer, TurnEnqueue, TurnInterrupt, QueueUpdate, QueueRemove, RunResume, RunResolveUncertain,
    ApprovalResponse, InteractionResponse, SettingsGet, PolicySetDefault, PolicyExplain, RulesAdd, RulesRemove,
    OriginsAdd, OriginsRemove, ScopeSetLock, AuditQuery, ProvidersSave, ProvidersVerify, ProvidersSetDefault,
    MemoryList, MemorySet, MemoryDelete, MemoryClear, ArtifactDownload, McpGet, McpSaveServer, McpRemoveServer,
    McpSetToken, McpRefresh,
]
UiEventMessage = Union[
    Initialized, ReloadRequired, CommandAck, CommandRejected, PongEvent, ErrorEvent, ThreadCreated, ThreadForked,
    ThreadDeleted, ThreadSnapshotEvent, TurnStart, TurnComplete, TokenUsage, ItemStart, ItemDelta, ItemComplete,
    ApprovalRequest, ApprovalResolved, InteractionRequest, InteractionResolved, ThreadUpdated, QueueUpdated, RunRecoveryRequired,
    TabsUpdated, ActivityUpdated, AlertRaised, SettingsState, PolicyExplained, AuditRows, ProvidersVerified,
    MemoryState, McpState,
]

DECISION_KINDS: tuple[str, ...] = tuple(
    c.__struct_config__.tag for c in ApprovalDecision.__args__  # type: ignore[attr-defined]
)
POLICY_LITERAL = PolicyName


def tag_of(cls: type) -> str:
    """The `type` value of an op or event class."""
    return cls.__struct_config__.tag  # type: ignore[attr-defined,no-any-return]


assert {tag_of(c) for c in UiOpMessage.__args__} == set(OP_TYPES)  # type: ignore[attr-defined]
assert {tag_of(c) for c in UiEventMessage.__args__} == set(EVENT_TYPES)  # type: ignore[attr-defined]
