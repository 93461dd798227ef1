"""The UI op/event catalogue: what extension pages send to the engine and what it sends back.

Pages talk to the service worker over a runtime Port; the worker wraps each op in a `ui.op`
frame and unwraps `ui.event` frames. Every op carries a `submissionId`; together with the
page's own `clientId` (from `initialize`) it identifies the command, so a page may resend an
op after a reconnect and get the stored answer instead of a second effect.

Every thread-scoped event carries `stream{threadId, epoch, sequence}`: the epoch grows with
each host start, the sequence within (thread, epoch), so a page can tell a gap from a restart.

One module per topic: `session` (handshake and generic answers), `threads`, `turns` (runs,
queue and items), `user_input` (what a turn submits), `approvals` (approvals and interactions),
`settings`, `providers`, `memory`, `mcp` and `skills` (skills and plugins); `common` holds what they share and `catalogue`
the two unions. The permission vocabularies are declared in `protocol.permissions` and the tool
levels in `protocol.tools`, which the gatekeeper and the tool registry read without this
catalogue. Every name is re-exported here, so callers write `ui.<Name>`.
"""

from protocol.permissions import APPROVAL_FLAGS, PERMISSION_POLICIES, PolicyName
from protocol.tools import TOOL_LEVELS, ToolLevel
from protocol.ui.common import Count, Epoch, Id, Label, Note, StreamCursor, SubmissionId, TabRef, Text, tag_of
from protocol.ui.user_input import (
    BrowserContext, ContentPart, ContextBlock, ImagePart, ModelRef, TextPart, TurnOverrides, UserInput,
)
from protocol.ui.turns import (
    ITEM_KINDS, RUN_STATES, STOP_REASONS, ArtifactDownload, ItemComplete, ItemDelta, ItemDeltaBody, ItemKind,
    ItemMeta, ItemResult, ItemStart, PendingToolView, QueueRemove, QueueUpdate, QueueUpdated, RunRecoveryRequired,
    RunResolveUncertain, RunResume, RunState, RunView, StopReason, TokenUsage, TurnComplete, TurnEnqueue, TurnFork,
    TurnInterrupt, TurnStart, TurnSteer, TurnSubmit, Usage,
)
from protocol.ui.approvals import (
    DECISION_KINDS, Accept, AcceptForSession, AcceptForSite, ApprovalDecision, ApprovalRequest,
    ApprovalRequestPayload, ApprovalResolved, ApprovalResponse, CancelDecision, DecisionKind, Decline,
    InteractionAnswer, InteractionCancel, InteractionRequest, InteractionResolved, InteractionResponse,
    InteractionSubmit, InteractionTimeout, PendingApproval, PendingInteraction,
)
from protocol.ui.threads import (
    Activity, ActivityUpdated, AlertRaised, ConsentItemView, ConsentRemove, ConsentUpdated, EngineSnapshot, NodeView,
    StorageStatus, TabsUpdated, ThreadCreate, ThreadCreated,
    ThreadDelete, ThreadDeleted, ThreadFork, ThreadForked, ThreadMeta, ThreadPatch, ThreadSelectBranch,
    ThreadSnapshot, ThreadSnapshotEvent, ThreadSubscribe, ThreadUpdated,
)
from protocol.ui.session import (
    ENGINE_PROTOCOL, ERROR_CODES, CommandAck, CommandRejected, ErrorEvent, Initialize, Initialized, PingOp,
    PongEvent, ReloadRequired, UiErrorCode,
)
from protocol.ui.settings import (
    AUDIT_KINDS, AuditKind, AuditQuery, AuditRow, AuditRows, AuditVerified, AuditVerify, OriginEntry, OriginList, OriginsAdd, OriginsRemove,
    Pattern, PolicyExplain, PolicyExplained, PolicySetDefault, RuleEntry, RulesAdd, RulesRemove, ScopeSetLock,
    SettingsGet, SettingsSnapshot, SettingsState, ThreadScope, ToolEntry, TraceLine, Verdict,
)
from protocol.ui.providers import (
    LeftOutTool, ProviderEntry, ProviderName, ProvidersRemove, ProvidersSave, ProvidersSetDefault, ProvidersVerified, ProvidersVerify,
    UserDetailsSave,
)
from protocol.ui.memory import (
    MemoryClear, MemoryDelete, MemoryEntry, MemoryKey, MemoryList, MemorySet, MemoryState,
)
from protocol.ui.mcp import (
    McpError, McpGet, McpRefresh, McpRemoveServer, McpSaveServer, McpServerEntry, McpServerId, McpSetToken,
    McpSkippedTool, McpState, McpToolEntry,
)
from protocol.ui.skills import (
    BundleSource, ContentHash, PluginEntry, PluginName, PluginReviewed, PluginRuleEntry, PluginServer, PluginsApprove,
    PluginsInstall, PluginsRemove, PluginsReview, PluginsSetServerEnabled, ReviewedSkill, SkillDetail, SkillEntry,
    SkillFile, SkillName, SkillsApprove, SkillsGet, SkillsInstall, SkillsList, SkillsRemove, SkillsSetEnabled,
    SkillsState,
)
from protocol.ui.catalogue import (
    EVENT_TYPES, OP_TYPES, POLICY_LITERAL, UiEventMessage, UiOpMessage,
)

__all__ = [
    "APPROVAL_FLAGS", "AUDIT_KINDS", "DECISION_KINDS", "ENGINE_PROTOCOL", "ERROR_CODES", "EVENT_TYPES", "ITEM_KINDS",
    "OP_TYPES", "PERMISSION_POLICIES", "POLICY_LITERAL", "RUN_STATES", "STOP_REASONS", "TOOL_LEVELS", "Accept",
    "AcceptForSession", "AcceptForSite", "Activity", "ActivityUpdated", "AlertRaised", "ApprovalDecision",
    "ApprovalRequest", "ApprovalRequestPayload", "ApprovalResolved", "ApprovalResponse", "ArtifactDownload",
    "AuditKind", "AuditQuery", "AuditRow", "AuditRows", "AuditVerified", "AuditVerify", "BrowserContext", "CancelDecision", "CommandAck",
    "CommandRejected", "ContentPart", "ContextBlock", "Count", "DecisionKind", "Decline", "EngineSnapshot", "Epoch",
    "ErrorEvent", "Id", "ImagePart", "Initialize", "Initialized", "InteractionAnswer", "InteractionCancel",
    "InteractionRequest", "InteractionResolved", "InteractionResponse", "InteractionSubmit", "InteractionTimeout",
    "ItemComplete", "ItemDelta", "ItemDeltaBody", "ItemKind", "ItemMeta", "ItemResult", "ItemStart", "Label", "LeftOutTool",
    "McpError", "McpGet", "McpRefresh", "McpRemoveServer", "McpSaveServer", "McpServerEntry", "McpServerId",
    "McpSetToken", "McpSkippedTool", "McpState", "McpToolEntry", "MemoryClear", "MemoryDelete", "MemoryEntry",
    "MemoryKey", "MemoryList", "MemorySet", "MemoryState", "ModelRef", "NodeView", "Note", "OriginEntry", "OriginList",
    "OriginsAdd", "OriginsRemove", "Pattern", "PendingApproval", "PendingInteraction", "PendingToolView", "PingOp",
    "PolicyExplain", "PolicyExplained", "PolicyName", "PolicySetDefault", "PongEvent", "ProviderEntry", "ProviderName",
    "UserDetailsSave", "ProvidersRemove", "ProvidersSave", "ProvidersSetDefault", "ProvidersVerified", "ProvidersVerify", "QueueRemove", "QueueUpdate",
    "QueueUpdated", "ReloadRequired", "RuleEntry", "RulesAdd", "RulesRemove", "RunRecoveryRequired",
    "RunResolveUncertain", "RunResume", "RunState", "RunView", "ScopeSetLock", "SettingsGet", "SettingsSnapshot",
    "SettingsState", "StopReason", "StreamCursor", "SubmissionId", "TabRef", "TabsUpdated", "Text", "TextPart",
    "ConsentItemView", "ConsentRemove", "ConsentUpdated", "StorageStatus", "ThreadCreate", "ThreadCreated", "ThreadDelete", "ThreadDeleted", "ThreadFork", "ThreadForked", "ThreadMeta",
    "ThreadPatch", "ThreadScope", "ThreadSelectBranch", "ThreadSnapshot", "ThreadSnapshotEvent", "ThreadSubscribe",
    "ThreadUpdated", "TokenUsage", "ToolEntry", "ToolLevel", "TraceLine", "TurnComplete", "TurnEnqueue", "TurnFork",
    "TurnInterrupt", "TurnOverrides", "TurnStart", "TurnSteer", "TurnSubmit", "UiErrorCode", "UiEventMessage",
    "UiOpMessage", "Usage", "UserInput", "Verdict", "tag_of",
    "BundleSource", "ContentHash", "PluginEntry", "PluginName", "PluginReviewed", "PluginRuleEntry", "PluginServer",
    "PluginsApprove", "PluginsInstall", "PluginsRemove", "PluginsReview", "PluginsSetServerEnabled", "ReviewedSkill",
    "SkillDetail", "SkillEntry", "SkillFile", "SkillName", "SkillsApprove", "SkillsGet", "SkillsInstall", "SkillsList",
    "SkillsRemove", "SkillsSetEnabled", "SkillsState",
]
