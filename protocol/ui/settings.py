"""The permission settings (settings page): the default policy, rules, blocked and guarded
origins, a thread's scope lock, the what-if explanation and the audit log, and the state the
page renders."""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

import msgspec

from protocol.permissions import OriginList, PolicyName, Verdict
from protocol.ui.common import Count, Id, Shape, SubmissionId, UiMessage
from protocol.ui.providers import ProviderEntry

Pattern = Annotated[str, msgspec.Meta(min_length=1, max_length=2048)]
# What an audit row records: a decision, the user's answer, a call's outcome, or an alert.
AuditKind = Literal["decision", "approval", "outcome", "alert"]
AUDIT_KINDS: tuple[str, ...] = get_args(AuditKind)


# ---------------------------------------------------------------- ops (page → engine)


class SettingsGet(UiMessage, tag="settings.get", kw_only=True):
    """The settings page's state (answered with `settings.state`); with `thread_id`, that
    thread's scope lock and accepted origins too."""

    submission_id: SubmissionId
    thread_id: Id | None = None


class PolicySetDefault(UiMessage, tag="policy.setDefault", kw_only=True):
    """The default permission policy (written to the user's policy file)."""

    submission_id: SubmissionId
    policy: PolicyName


class PolicyExplain(UiMessage, tag="policy.explain", kw_only=True):
    """A what-if: how the gatekeeper would judge `tool` at `url` (not audited, runs nothing).
    Answered with `policy.explained`."""

    submission_id: SubmissionId
    tool: Annotated[str, msgspec.Meta(min_length=1, max_length=256)]
    url: Annotated[str, msgspec.Meta(max_length=8192)] = ""
    params: dict[str, Any] = {}
    thread_id: Id | None = None
    policy: PolicyName | None = None


class RulesAdd(UiMessage, tag="rules.add", kw_only=True):
    """A user rule: `tool` is a name, a prefix wildcard (`mcp__*`), `category:<name>` or `*`."""

    submission_id: SubmissionId
    tool: Annotated[str, msgspec.Meta(min_length=1, max_length=256)]
    origin: Pattern
    verdict: Verdict


class RulesRemove(UiMessage, tag="rules.remove", kw_only=True):
    submission_id: SubmissionId
    rule_id: Annotated[str, msgspec.Meta(min_length=1, max_length=256)]


class OriginsAdd(UiMessage, tag="origins.add", kw_only=True):
    submission_id: SubmissionId
    list: OriginList
    pattern: Pattern


class OriginsRemove(UiMessage, tag="origins.remove", kw_only=True):
    submission_id: SubmissionId
    list: OriginList
    pattern: Pattern


class ScopeSetLock(UiMessage, tag="scope.setLock", kw_only=True):
    """Confine a thread's writes and navigations to origin patterns (None lifts the lock)."""

    submission_id: SubmissionId
    thread_id: Id
    patterns: Annotated[list[Pattern], msgspec.Meta(max_length=256)] | None = None


class AuditQuery(UiMessage, tag="audit.query", kw_only=True):
    """The newest audit rows matching the filters (answered with `audit.rows`)."""

    submission_id: SubmissionId
    thread_id: Id | None = None
    tool: Annotated[str, msgspec.Meta(max_length=256)] | None = None
    verdict: Verdict | None = None
    kind: AuditKind | None = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=500)] = 100


class AuditVerify(UiMessage, tag="audit.verify", kw_only=True):
    """Recompute the audit log's hash chain (answered with `audit.verified`)."""

    submission_id: SubmissionId


# ---------------------------------------------------------------- state and answers (engine → page)


class RuleEntry(Shape, kw_only=True):
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


class OriginEntry(Shape, kw_only=True):
    pattern: str
    # built in, from a policy file, added here, or added by a plugin (removed with it)
    origin: Literal["builtin", "file", "user", "plugin"]
    removable: bool
    plugin: str | None = None


class ToolEntry(Shape, kw_only=True):
    name: str
    label: str
    level: str
    effects: str
    category: str | None = None


class ThreadScope(Shape, kw_only=True):
    thread_id: Id
    lock: list[str] | None = None
    accepted_origins: list[str] = []
    policy: str = ""


class SettingsSnapshot(Shape, kw_only=True):
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
    # The user's own details (engine.json `userDetails`).
    user_details: list[str] = []
    thread: ThreadScope | None = None
    # Why part of the state could not be read (an invalid engine.json, an unavailable gatekeeper).
    problems: list[str] = []


class SettingsState(UiMessage, tag="settings.state", kw_only=True):
    """The answer to `settings.get`, and sent to every page after any settings change."""

    submission_id: SubmissionId | None = None
    state: SettingsSnapshot


class TraceLine(Shape, kw_only=True):
    step: str
    outcome: str  # hit | pass | skip
    detail: str


class PolicyExplained(UiMessage, tag="policy.explained", kw_only=True):
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


class AuditRow(Shape, kw_only=True):
    seq: int
    at: float
    kind: str
    thread_id: str
    tool: str
    # The rows of one tool call (its decision, the user's answer, its outcome) share these.
    turn_id: str | None = None
    call_id: str | None = None
    target_origin: str = ""
    params_redacted: Any = None
    verdict: str | None = None
    code: str | None = None
    rule: str | None = None
    flags: list[str] | None = None
    approval_decision: str | None = None
    tool_outcome: str | None = None
    detail: str | None = None


class AuditRows(UiMessage, tag="audit.rows", kw_only=True):
    """Newest last."""

    submission_id: SubmissionId
    rows: list[AuditRow] = []


class AuditVerified(UiMessage, tag="audit.verified", kw_only=True):
    """The chain check: how many rows were checked, the head hash, and the first broken row."""

    submission_id: SubmissionId
    ok: bool
    rows: Count = 0
    head: str = ""
    broken_seq: int | None = None
    problem: str | None = None
