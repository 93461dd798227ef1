"""What the engine asks the user: approvals of tool calls and interactions (questions, actions
and waits), the answers a page sends, and the events that open and close their cards."""

from __future__ import annotations

from typing import Any, Literal, Union, get_args

import msgspec

from protocol.ui.common import Count, Epoch, Id, Note, Shape, StreamCursor, SubmissionId, UiMessage, tag_of


# ---------------------------------------------------------------- answers (page → engine)


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
# The tags above are the decisions' one declaration; a field that names a decision uses the Literal.
DECISION_KINDS: tuple[str, ...] = tuple(tag_of(c) for c in get_args(ApprovalDecision))
DecisionKind = Literal[DECISION_KINDS]  # type: ignore[valid-type]


class ApprovalResponse(UiMessage, tag="approval.response", kw_only=True):
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


class InteractionResponse(UiMessage, tag="interaction.response", kw_only=True):
    submission_id: SubmissionId
    interaction_id: Id
    response: InteractionAnswer


# ---------------------------------------------------------------- views


class OtherSite(Shape, kw_only=True):
    """A place a call takes the page to (or opens in a new tab) on another site than the page's."""

    url: str  # as the host judged it
    site: str  # its registrable domain


class ActionTarget(Shape, kw_only=True):
    """The element of one action of a multi-action call, as the host's ref map describes it."""

    role: str = ""
    name: str = ""
    # The element is a password input (or carries a credential autocomplete token): its typed
    # text is masked, as `password_target` masks a single call's.
    password_target: bool = False


class ApprovalRequestPayload(Shape, kw_only=True):
    """What the user is asked about: the complete parameters, where, and why it was asked."""

    tool: str
    label: str
    params: dict[str, Any]
    target_origin: str
    flags: list[str] = []
    reason: str = ""
    code: str = ""
    level: str = ""
    # The acted-on element as the latest snapshot showed it (from the host-side ref map). Page
    # text: the card shows it, and decides nothing from it.
    target_line: str | None = None
    # Where acting on that element takes the page when it leaves the tab's origin: a link's URL
    # or a form's action, as `METHOD URL` (from the host's facts).
    destinations: list[str] = []
    # The host's element facts (the input types of its ref map) say the call types into a
    # password field: the card masks the typed text.
    password_target: bool = False
    # Values the call would send that the user did not give (code `untrusted_value`): each as
    # {kind, what, value, seenAt} (seenAt: where it was seen, or null), for the card to show plainly.
    untrusted_values: list[dict[str, Any]] = []
    # The acted-on element as the host's ref map describes it (its role, and its label or
    # accessible name), when the call acts on exactly one: the card's plain sentence names it.
    # Page text, like `target_line`.
    target_role: str = ""
    target_name: str = ""
    # The permission policy the call was judged under (its code; the page shows its name).
    policy: str = ""
    # The origin of the page the call acts on, when that is not `target_origin` (a click judged
    # at the origin its link leads to still happens on this page).
    page_origin: str = ""
    # What the call commits (the gatekeeper's effect class: pay, send, delete, security, access,
    # submit, upload, install, unknown; "" for an ordinary step) and the same in plain words.
    effect: str = ""
    effect_words: str = ""
    # The user's own words that handed the commit's choice to something the agent read ("do the
    # tasks on my TODO list"), when they did: the card says the choice came from there.
    effect_chosen_by: str = ""
    # When the call takes the page to another site (a navigation, a link, a form, a history
    # move, a new tab): the page's registrable domain and each other-site place, for the card to
    # say that the agent leaves the one for the other.
    page_site: str = ""
    other_sites: list[OtherSite] = []
    # For each kind of value in `untrusted_values` (its `what`) that the user's own words also
    # hold: the user's values of that kind as they wrote them (newest last), shown beside the page's.
    users_values: dict[str, list[str]] = {}
    # A multi-action call (`params.actions`): each action's element, in the actions' order.
    action_targets: list[ActionTarget] = []


class PendingApproval(Shape, kw_only=True):
    approval_id: Id
    thread_id: Id
    turn_id: Id
    item_id: Id
    request: ApprovalRequestPayload
    requested_at: Epoch
    deadline_at: Epoch
    remaining_ms: Count = 0


class PendingInteraction(Shape, kw_only=True):
    """A question the model asked the user (ask_user) that has no answer yet."""

    interaction_id: Id
    thread_id: Id
    turn_id: Id
    item_id: Id
    request: dict[str, Any]
    requested_at: Epoch
    deadline_at: Epoch
    remaining_ms: Count = 0


# ---------------------------------------------------------------- events (engine → page)


class ApprovalRequest(UiMessage, tag="approval.request", kw_only=True):
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


class ApprovalResolved(UiMessage, tag="approval.resolved", kw_only=True):
    """An approval was settled (by a page, a timeout, an interrupt or recovery): close its card."""

    thread_id: Id
    approval_id: Id
    decision: str
    by: Literal["user", "timeout", "interrupt", "recovery"]
    stream: StreamCursor


class InteractionRequest(UiMessage, tag="interaction.request", kw_only=True):
    """The run waits on the user or a condition; `request.kind` says which:
    ask_user {question, options?}; request_user_action {action, reason?, tabId?} (the user does
    it, then submits: the model learns only that it is done); watch_page {tabId, origin,
    textAppears?, textGone?, urlMatches?, note?, summary} (settled by the watcher; submit ends it
    early, cancel stops it); schedule_resume {delaySeconds, reason, summary} (continues at the
    deadline; submit resumes now); elicitation {server, message, fields} (an MCP server's
    question while its tool runs: submit with the form's values as `value`, cancel with note
    "decline" to decline, plain cancel to dismiss). Answered with `interaction.response`."""

    thread_id: Id
    turn_id: Id
    interaction_id: Id
    item_id: Id
    request: dict[str, Any]
    deadline_at: Epoch
    remaining_ms: Count
    stream: StreamCursor


class InteractionResolved(UiMessage, tag="interaction.resolved", kw_only=True):
    thread_id: Id
    interaction_id: Id
    response: str  # submit | cancel | timeout
    by: Literal["user", "timeout", "interrupt", "recovery", "watch"]  # watch: watch_page's page watcher
    stream: StreamCursor
