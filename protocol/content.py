"""The messages between the extension's service worker and its content scripts.

They never reach the host, so they are not part of the schema document or its hash; they are
declared here so the two ends read one declaration instead of two hand-typed ones.
`python -m protocol.generate` writes them as `extension/generated/content-protocol.js`, a classic
script (content scripts cannot import modules) that the worker injects before the page parts
that use it and that `protocol.js` re-exports to the worker as `CONTENT`.

Every message is an object tagged by `type` (`chrome.tabs.sendMessage` from the worker to a
frame, `chrome.runtime.sendMessage` from a page to the worker). Each listener acts only on the
types it owns, after checking every field; a message of an unknown type or with a bad field is
refused, never acted on.

The answers (the executor's `{ok, requestId, result | error, failure}`, the indicator's
`{ok, shown}`, the worker's `true` after a sleep) are not declared here.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union, get_args

import msgspec

from protocol.messages import MAX_URL_CHARS

RequestId = Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
ToolName = Annotated[str, msgspec.Meta(min_length=1, max_length=256)]
# Epoch milliseconds; the largest integer a JavaScript number holds exactly.
Deadline = Annotated[int, msgspec.Meta(ge=0, le=2**53 - 1)]
# The name of the port the worker keeps open to a document's executor for reads: the messages
# on it are `executor.execute` of read tools, each answered as over a one-off message.
READ_PORT = "executor.reads"
# The longest wait the worker times for a page; a page asking more sleeps this long.
MAX_SLEEP_MS = 60_000


class ContentMessage(msgspec.Struct, tag_field="type", rename="camel", omit_defaults=True, forbid_unknown_fields=True,
                     kw_only=True):
    """Base of every worker <-> content script message: its `type` tag names it."""


# ---------------------------------------------------------------- worker → page executor


class ExecutorPing(ContentMessage, tag="executor.ping", kw_only=True):
    """Is an executor in this frame? It answers `pong`; no answer means: inject it."""

    request_id: RequestId


class ExecutorExecute(ContentMessage, tag="executor.execute", kw_only=True):
    """Run one L1 tool. Requests run one at a time per document, each until `deadline_at`."""

    request_id: RequestId
    tool: ToolName
    # Any JSON value here: the executor checks it against the tool's own parameters and answers
    # with the path of what is wrong (`invalid_params`), as for any other bad parameter.
    params: Any
    deadline_at: Deadline
    # The URL the receiving document must have for the tool to run (none when empty): the call
    # was judged for the page at it. Otherwise the answer is `target_changed`, and nothing ran.
    expect_url: Annotated[str, msgspec.Meta(max_length=MAX_URL_CHARS)] = ""
    # Run only once the receiving document's load event has run: the read that goes with a load
    # the agent started, sent to the new document while it still loads.
    after_load: bool = False


class ExecutorCancel(ContentMessage, tag="executor.cancel", kw_only=True):
    """Abort the request `cancel_request_id` (nothing happens when it has already finished)."""

    request_id: RequestId
    cancel_request_id: RequestId


# ---------------------------------------------------------------- worker → page indicator


class IndicatorShow(ContentMessage, tag="indicator.show", kw_only=True):
    """Show the page indicator (an agent turn drives this tab)."""


class IndicatorHide(ContentMessage, tag="indicator.hide", kw_only=True):
    """Take the page indicator down."""


# ---------------------------------------------------------------- page → worker


class IndicatorAction(ContentMessage, tag="indicator.action", kw_only=True):
    """The user pressed one of the indicator's buttons (a trusted click, top frame only)."""

    action: Literal["pause", "stop"]


class ManualInput(ContentMessage, tag="takeover.manualInput", kw_only=True):
    """A trusted mouse or key press in a page: a person may be taking over the tab. The worker
    takes the tab, frame and URL from the sender, not from the message."""

    kind: Literal["mousedown", "keydown"]
    during_agent_request: bool


class FrameLoaded(ContentMessage, tag="takeover.frameLoaded", kw_only=True):
    """A frame of the page (re)loaded, or a document first driven holds frames: their documents
    need the takeover watcher."""


class TimerSleep(ContentMessage, tag="timer.sleep", kw_only=True):
    """Wait `ms` on the worker's timers (a hidden tab's own are throttled to about one a second);
    the worker answers `true` when the time is up."""

    ms: Annotated[float, msgspec.Meta(ge=0, le=MAX_SLEEP_MS)]


ToPage = Union[ExecutorPing, ExecutorExecute, ExecutorCancel, IndicatorShow, IndicatorHide]
ToWorker = Union[IndicatorAction, ManualInput, FrameLoaded, TimerSleep]

TO_PAGE: tuple[type[ContentMessage], ...] = get_args(ToPage)
TO_WORKER: tuple[type[ContentMessage], ...] = get_args(ToWorker)
