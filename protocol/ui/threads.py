"""Threads: creating, subscribing to, forking and deleting them, their snapshots (what a page
renders before the live events), and the broadcasts every page gets (activity, tabs, alerts)."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from protocol.permissions import PolicyName
from protocol.ui.approvals import PendingApproval, PendingInteraction
from protocol.ui.common import Count, Epoch, Id, Label, Shape, StreamCursor, SubmissionId, TabRef, UiMessage
from protocol.ui.settings import Pattern
from protocol.ui.turns import RunState, RunView


# ---------------------------------------------------------------- ops (page → engine)


class ThreadCreate(UiMessage, tag="thread.create", kw_only=True):
    submission_id: SubmissionId
    title: Label | None = None
    permission_policy: PolicyName | None = None


class ThreadSubscribe(UiMessage, tag="thread.subscribe", kw_only=True):
    submission_id: SubmissionId
    thread_id: Id


class ThreadDelete(UiMessage, tag="thread.delete", kw_only=True):
    submission_id: SubmissionId
    thread_id: Id


class ThreadFork(UiMessage, tag="thread.fork", kw_only=True):
    """A new thread holding the path from the root to `at_node_id`."""

    submission_id: SubmissionId
    thread_id: Id
    at_node_id: Id


class ThreadSelectBranch(UiMessage, tag="thread.selectBranch", kw_only=True):
    """Make the branch through `node_id` current (its newest leaf becomes the thread's leaf)."""

    submission_id: SubmissionId
    thread_id: Id
    node_id: Id


class ConsentRemove(UiMessage, tag="consent.remove", kw_only=True):
    """Take back one commit the task's consent holds: it asks again from then on."""

    submission_id: SubmissionId
    thread_id: Id
    item_id: Annotated[str, msgspec.Meta(min_length=1, max_length=600)]


# ---------------------------------------------------------------- snapshot shapes


class ConsentItemView(Shape, kw_only=True):
    """One commit the user's own words asked for in this task: the panel lists them under the
    conversation ("This task may: …"), each removable."""

    id: str
    effect: str
    text: str  # in plain words: "sending or publishing something to bob@example.com"
    site: str = ""  # a registrable domain; "" for any site
    words: str = ""  # the user's words that asked for it


# The sites a thread's scope lock holds it to (empty: not locked).
LockPatterns = Annotated[list[Pattern], msgspec.Meta(max_length=256)]


class ThreadMeta(Shape, kw_only=True):
    id: Id
    title: str
    created_at: Epoch
    updated_at: Epoch
    revision: Count
    leaf_id: str | None = None
    parent_thread_id: str | None = None
    permission_policy: PolicyName | None = None
    # What the thread list shows beside the title, so that threads of the same title can be told
    # apart and a locked one shows its lock (filled in by the op server): the site of the tab its
    # first task was sent from, how many tasks were sent to it, and its scope lock.
    site: Label = ""
    turns: Count = 0
    scope_lock: LockPatterns = []


class NodeView(Shape, kw_only=True):
    """One node of a thread's tree; `body` depends on `kind`."""

    id: Id
    kind: str
    seq: Count
    created_at: Epoch
    parent_id: str | None = None
    turn_id: str | None = None
    body: dict[str, Any] = {}


class ThreadSnapshot(Shape, kw_only=True):
    meta: ThreadMeta
    # The current branch, root first.
    nodes: list[NodeView] = []
    active_run: RunView | None = None
    queue: list[RunView] = []
    pending_approvals: list[PendingApproval] = []
    pending_interactions: list[PendingInteraction] = []
    cursor: StreamCursor | None = None
    # What the task may commit without a question (the task's consent).
    consent: list[ConsentItemView] = []


class Activity(Shape, kw_only=True):
    thread_id: Id
    running: bool
    pending_approvals: Count = 0
    pending_interactions: Count = 0
    state: RunState | None = None


class EngineSnapshot(Shape, kw_only=True):
    threads: list[ThreadMeta] = []
    thread: ThreadSnapshot | None = None
    activity: list[Activity] = []
    # Every approval waiting for an answer, in every thread (a page that connects after a
    # restart shows them from here: the live approval.request went out before it was there).
    pending_approvals: list[PendingApproval] = []
    pending_interactions: list[PendingInteraction] = []
    epoch: Annotated[int, msgspec.Meta(ge=0)] = 0
    # Why every call is refused right now ("storage unavailable: database is locked"), or "".
    storage_unavailable: str = ""


class ThreadPatch(Shape, kw_only=True):
    title: str | None = None
    leaf_id: str | None = None
    permission_policy: PolicyName | None = None
    updated_at: Epoch | None = None
    site: Label | None = None
    turns: Count | None = None
    scope_lock: LockPatterns | None = None  # [] when the lock was lifted


# ---------------------------------------------------------------- events (engine → page)


class ThreadCreated(UiMessage, tag="thread.created", kw_only=True):
    thread_id: Id
    meta: ThreadMeta
    stream: StreamCursor


class ThreadForked(UiMessage, tag="thread.forked", kw_only=True):
    thread_id: Id
    new_thread_id: Id
    stream: StreamCursor


class ThreadDeleted(UiMessage, tag="thread.deleted", kw_only=True):
    thread_id: Id
    stream: StreamCursor


class ThreadSnapshotEvent(UiMessage, tag="thread.snapshot", kw_only=True):
    """The answer to `thread.subscribe`: the state to render before the live events after it."""

    thread_id: Id
    submission_id: SubmissionId | None = None
    snapshot: ThreadSnapshot
    stream: StreamCursor


class ThreadUpdated(UiMessage, tag="thread.updated", kw_only=True):
    thread_id: Id
    revision: Count
    patch: ThreadPatch
    stream: StreamCursor


class ConsentUpdated(UiMessage, tag="consent.updated", kw_only=True):
    """The task's consent changed: a message asked for a commit, or the user removed one."""

    thread_id: Id
    items: list[ConsentItemView] = []
    stream: StreamCursor


class TabsUpdated(UiMessage, tag="tabs.updated", kw_only=True):
    tabs: list[TabRef] = []


class ActivityUpdated(UiMessage, tag="activity.updated", kw_only=True):
    """Sent to every page (not only a thread's subscribers), for badges and lists."""

    activity: Activity


class StorageStatus(UiMessage, tag="storage.status", kw_only=True):
    """Sent to every page when the host's storage fails or answers again: while it does not,
    every tool call is refused and the panel says why (`cause`); it clears by itself."""

    available: bool
    cause: str = ""


class AlertRaised(UiMessage, tag="alert.raised", kw_only=True):
    """A denial burst or another sign that a thread may be under prompt injection."""

    thread_id: Id
    code: str
    message: str
    stream: StreamCursor | None = None
