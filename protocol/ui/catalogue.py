"""The whole catalogue: every op a page may send and every event the engine sends, as the two
tagged unions the UI link decodes and encodes."""

from __future__ import annotations

from typing import Union, get_args

from protocol.ui import approvals, mcp, memory, providers, session, settings, skills, threads, turns
from protocol.permissions import PolicyName
from protocol.ui.common import tag_of

UiOpMessage = Union[
    session.Initialize, session.PingOp,
    threads.ThreadCreate, threads.ThreadSubscribe, threads.ThreadDelete, threads.ThreadFork, threads.ThreadSelectBranch,
    threads.ConsentRemove,
    turns.TurnSubmit, turns.TurnFork, turns.TurnSteer, turns.TurnEnqueue, turns.TurnInterrupt, turns.QueueUpdate,
    turns.QueueRemove, turns.RunResume, turns.RunResolveUncertain,
    approvals.ApprovalResponse, approvals.InteractionResponse,
    settings.SettingsGet, settings.PolicySetDefault, settings.PolicyExplain, settings.RulesAdd, settings.RulesRemove,
    settings.OriginsAdd, settings.OriginsRemove, settings.ScopeSetLock, settings.AuditQuery,
    settings.AuditVerify,
    providers.ProvidersSave, providers.ProvidersVerify, providers.ProvidersSetDefault, providers.ProvidersRemove,
    providers.UserDetailsSave,
    memory.MemoryList, memory.MemorySet, memory.MemoryDelete, memory.MemoryClear,
    turns.ArtifactDownload,
    mcp.McpGet, mcp.McpSaveServer, mcp.McpRemoveServer, mcp.McpSetToken, mcp.McpRefresh,
    skills.SkillsList, skills.SkillsInstall, skills.SkillsSetEnabled, skills.SkillsRemove, skills.SkillsApprove,
    skills.SkillsGet, skills.PluginsReview, skills.PluginsInstall, skills.PluginsRemove,
    skills.PluginsSetServerEnabled, skills.PluginsApprove,
]
UiEventMessage = Union[
    session.Initialized, session.ReloadRequired, session.CommandAck, session.CommandRejected, session.PongEvent,
    session.ErrorEvent,
    threads.ThreadCreated, threads.ThreadForked, threads.ThreadDeleted, threads.ThreadSnapshotEvent,
    turns.TurnStart, turns.TurnComplete, turns.TokenUsage, turns.ItemStart, turns.ItemDelta, turns.ItemComplete,
    approvals.ApprovalRequest, approvals.ApprovalResolved, approvals.InteractionRequest, approvals.InteractionResolved,
    threads.ThreadUpdated, turns.QueueUpdated, turns.RunRecoveryRequired, threads.TabsUpdated,
    threads.ActivityUpdated, threads.AlertRaised, threads.ConsentUpdated, threads.StorageStatus,
    settings.SettingsState, settings.PolicyExplained, settings.AuditRows, settings.AuditVerified,
    providers.ProvidersVerified,
    memory.MemoryState,
    mcp.McpState,
    skills.SkillsState, skills.SkillDetail, skills.PluginReviewed,
]

# The type names in the unions' order, for the schema document and the generated protocol.js.
OP_TYPES: tuple[str, ...] = tuple(tag_of(c) for c in get_args(UiOpMessage))
EVENT_TYPES: tuple[str, ...] = tuple(tag_of(c) for c in get_args(UiEventMessage))

POLICY_LITERAL = PolicyName
