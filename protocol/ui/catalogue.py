"""The whole catalogue: every op a page may send and every event the engine sends, as the two
tagged unions the UI link decodes and encodes."""

from __future__ import annotations

from typing import Union

from protocol.ui import approvals, mcp, memory, providers, session, settings, threads, turns
from protocol.ui.common import PolicyName, tag_of

UiOpMessage = Union[
    session.Initialize, session.PingOp,
    threads.ThreadCreate, threads.ThreadSubscribe, threads.ThreadDelete, threads.ThreadFork, threads.ThreadSelectBranch,
    turns.TurnSubmit, turns.TurnFork, turns.TurnSteer, turns.TurnEnqueue, turns.TurnInterrupt, turns.QueueUpdate,
    turns.QueueRemove, turns.RunResume, turns.RunResolveUncertain,
    approvals.ApprovalResponse, approvals.InteractionResponse,
    settings.SettingsGet, settings.PolicySetDefault, settings.PolicyExplain, settings.RulesAdd, settings.RulesRemove,
    settings.OriginsAdd, settings.OriginsRemove, settings.ScopeSetLock, settings.AuditQuery,
    providers.ProvidersSave, providers.ProvidersVerify, providers.ProvidersSetDefault,
    memory.MemoryList, memory.MemorySet, memory.MemoryDelete, memory.MemoryClear,
    turns.ArtifactDownload,
    mcp.McpGet, mcp.McpSaveServer, mcp.McpRemoveServer, mcp.McpSetToken, mcp.McpRefresh,
]
UiEventMessage = Union[
    session.Initialized, session.ReloadRequired, session.CommandAck, session.CommandRejected, session.PongEvent,
    session.ErrorEvent,
    threads.ThreadCreated, threads.ThreadForked, threads.ThreadDeleted, threads.ThreadSnapshotEvent,
    turns.TurnStart, turns.TurnComplete, turns.TokenUsage, turns.ItemStart, turns.ItemDelta, turns.ItemComplete,
    approvals.ApprovalRequest, approvals.ApprovalResolved, approvals.InteractionRequest, approvals.InteractionResolved,
    threads.ThreadUpdated, turns.QueueUpdated, turns.RunRecoveryRequired, threads.TabsUpdated,
    threads.ActivityUpdated, threads.AlertRaised,
    settings.SettingsState, settings.PolicyExplained, settings.AuditRows, providers.ProvidersVerified,
    memory.MemoryState,
    mcp.McpState,
]

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

POLICY_LITERAL = PolicyName

assert {tag_of(c) for c in UiOpMessage.__args__} == set(OP_TYPES)  # type: ignore[attr-defined]
assert {tag_of(c) for c in UiEventMessage.__args__} == set(EVENT_TYPES)  # type: ignore[attr-defined]
