"""Every message that crosses the native-messaging port, as msgspec Structs.

Messages are tagged unions on the `type` field. Field names are snake_case in Python and
camelCase on the wire. Requests the host sends carry an `id`; the extension answers each with
exactly one `result` or `failure` carrying the same id. Replies and requests are distinct
types, so a reply can never be mistaken for a command and echoed back forever.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

import msgspec

from protocol.errors import ErrorInfo
from protocol.guard import MAX_GUARD_RULES, GuardRule

RequestId = Annotated[int, msgspec.Meta(ge=0, le=2**53 - 1)]
TabId = Annotated[int, msgspec.Meta(ge=-1, le=2**31 - 1)]  # -1: chrome.tabs.TAB_ID_NONE
FrameId = Annotated[int, msgspec.Meta(ge=0, le=2**31 - 1)]
Name = Annotated[str, msgspec.Meta(min_length=1, max_length=256)]
ShortText = Annotated[str, msgspec.Meta(max_length=4096)]
Hash = Annotated[str, msgspec.Meta(pattern=r"^[0-9a-f]{16,64}$")]
Deadline = Annotated[int, msgspec.Meta(ge=0, le=600_000)]
MAX_URL_CHARS = 2 * 1024 * 1024  # Chrome's own limit on a URL


class Message(
    msgspec.Struct,
    tag_field="type",
    rename="camel",
    omit_defaults=True,
    forbid_unknown_fields=True,
    kw_only=True,
):
    """Base of every wire message."""


# ---------------------------------------------------------------- both directions


class Ping(Message, tag="ping", kw_only=True):
    """Liveness probe; the peer answers with a Pong carrying the same id."""

    id: RequestId


class Pong(Message, tag="pong", kw_only=True):
    id: RequestId


class Chunk(Message, tag="chunk", kw_only=True):
    """One numbered piece of a logical message too large for a single frame.

    `data` is a slice of the logical message's JSON text (cut between characters); the
    receiver joins the pieces of `message_id` in index order and decodes the whole as one
    message.
    """

    message_id: RequestId
    index: Annotated[int, msgspec.Meta(ge=0, le=65_535)]
    count: Annotated[int, msgspec.Meta(ge=1, le=65_536)]
    data: str


class ProtocolErrorReport(Message, tag="protocol_error", kw_only=True):
    """Tells the peer that one of its frames was refused, and why."""

    error: ErrorInfo
    request_id: RequestId | None = None


# ---------------------------------------------------------------- handshake


class Hello(Message, tag="hello", kw_only=True):
    """First message from the extension after connectNative()."""

    protocol: Name
    protocol_version: Annotated[int, msgspec.Meta(ge=1)]
    schema_hash: Hash
    extension_version: Name
    # Random id kept in chrome.storage.session: stable across service-worker restarts,
    # new for every browser run. Session grants are bound to it.
    browser_session_id: Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z0-9_-]{8,64}$")]
    browser: ShortText = ""  # navigator.userAgent


class Welcome(Message, tag="welcome", kw_only=True):
    """The host's answer to a matching Hello."""

    protocol: Name
    protocol_version: int
    schema_hash: Hash
    host_version: Name
    host_pid: int


class Fatal(Message, tag="fatal", kw_only=True):
    """The host refuses the session (protocol or schema mismatch); the extension must reload."""

    error: ErrorInfo
    protocol: Name
    schema_hash: Hash


# ---------------------------------------------------------------- host → extension requests


class ContentCall(Message, tag="content.call", kw_only=True):
    """Run a content-script tool in one frame of one tab (L1)."""

    id: RequestId
    tab_id: TabId
    frame_id: FrameId = 0
    tool: Name
    params: dict[str, Any] = {}
    deadline_ms: Deadline = 15_000
    # Write calls wrap the dispatch in the MAIN-world dialog patch.
    write: bool = False
    # The URL the tab must still show (`tab.url`, else its pending URL) for the call to reach the
    # page: the call was judged for it. Otherwise it fails `target_changed`, unsent.
    expect_url: Annotated[str, msgspec.Meta(max_length=MAX_URL_CHARS)] | None = None


class BrowserCall(Message, tag="browser.call", kw_only=True):
    """Call an extension API on the host's behalf (L0: tabs, windows, history, permissions...).

    `api` is a dotted name such as "tabs.query"; the extension keeps its own allowlist.
    """

    id: RequestId
    api: Name
    args: list[Any] = []
    deadline_ms: Deadline = 15_000


CdpMethod = Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z]+\.[A-Za-z]+$", max_length=128)]
SessionId = Annotated[str, msgspec.Meta(max_length=256)]
MAX_BATCH_STEPS = 32


class CdpCommand(Message, tag="cdp.command", kw_only=True):
    """Send one CDP command through chrome.debugger (L2)."""

    id: RequestId
    tab_id: TabId
    # A flat child session (out-of-process iframe, worker); None for the tab itself.
    session_id: SessionId | None = None
    method: CdpMethod
    params: dict[str, Any] = {}
    deadline_ms: Deadline = 30_000
    # "ax_nodes": the extension leaves out of the result's accessibility nodes what the host
    # never reads (name sources, Chromium's role numbers, inline text boxes) before the answer
    # crosses the port; on a big page they are about half of it.
    trim: Literal["ax_nodes"] | None = None


class CdpStep(msgspec.Struct, rename="camel", omit_defaults=True, forbid_unknown_fields=True, kw_only=True):
    """One command of a `cdp.batch`. With `expect`, the value at `expect_at` in its result
    (`result.value` by default: what a `Runtime.evaluate` returned; null when there is none) must
    equal it, as JSON, for the batch to go on. With `overlap`, it is sent without waiting for the answer of the command
    before it (still after it, in order); a command without `overlap` is sent only once every
    command before it has answered as expected, so a stop at a command holds back all that
    follow it but the overlapping ones sent with it. `deadline_ms`: its own time limit (within
    the batch's)."""

    session_id: SessionId | None = None
    method: CdpMethod
    params: dict[str, Any] = {}
    expect: Any | msgspec.UnsetType = msgspec.UNSET
    # Where in the result the expected value is (keys from the top); empty: `result.value`.
    expect_at: Annotated[list[Annotated[str, msgspec.Meta(max_length=64)]], msgspec.Meta(max_length=8)] = []
    overlap: bool = False
    deadline_ms: Deadline | None = None


class CdpBatch(Message, tag="cdp.batch", kw_only=True):
    """Send CDP commands one after the other through chrome.debugger, in the extension, without
    a round trip to the host between them (a look, the input it allows, the flush after it).
    The answer is a `CdpBatchOutcome`: it stops at the first command that fails or reads an
    unexpected value, and what came after it is never sent."""

    id: RequestId
    tab_id: TabId
    steps: Annotated[list[CdpStep], msgspec.Meta(min_length=1, max_length=MAX_BATCH_STEPS)]
    # Also list every tab (chrome.tabs.query) before the first command and after the last one
    # that ran: a tab the commands opened, and where this one is now, without another trip.
    list_tabs: bool = False
    deadline_ms: Deadline = 30_000


class CdpBatchOutcome(msgspec.Struct, rename="camel", omit_defaults=True, kw_only=True):
    """What a `cdp.batch` did: the results of the commands that ran, in order; `stopped_at`, the
    command it stopped at (its result is in `results` when it read an unexpected value, which
    is then `unexpected`; it is not when it failed, and `error` says why)."""

    results: list[Any] = []
    stopped_at: int | None = None
    unexpected: Any | msgspec.UnsetType = msgspec.UNSET
    error: ErrorInfo | None = None
    # With `list_tabs`: the tabs before and after (None when a listing failed).
    tabs_before: list[Any] | None = None
    tabs_after: list[Any] | None = None


class DiagCall(Message, tag="diag.call", kw_only=True):
    """Diagnostics: echo a payload, digest it (length + SHA-256), describe the extension, or
    round-trip a ping through the content script of tab `data.tabId`."""

    id: RequestId
    op: Literal["echo", "digest", "info", "content_ping"]
    data: Any = None


class GuardInstall(Message, tag="guard.install", kw_only=True):
    """Replace every rule of the navigation guard with `rules` (an empty list lifts it). The
    extension answers once the browser enforces them, or with a failure, and the host then refuses
    the driven tabs' writes."""

    id: RequestId
    rules: Annotated[list[GuardRule], msgspec.Meta(max_length=MAX_GUARD_RULES)] = []


class UiEvent(Message, tag="ui.event", kw_only=True):
    """An engine event for one extension page (side panel, settings), or every page when
    `client_id` is empty."""

    client_id: Annotated[str, msgspec.Meta(max_length=128)] = ""
    event: dict[str, Any]


class Cancel(Message, tag="cancel", kw_only=True):
    """Abandon a request sent earlier; the extension answers it with a `cancelled` failure
    if it has not answered yet."""

    id: RequestId


# ---------------------------------------------------------------- extension → host


class Result(Message, tag="result", kw_only=True):
    """Successful answer to the host request `id`.

    Any JSON value may be sent. The receiver keeps `value` undecoded (`msgspec.Raw`) until the
    request that asked for it decodes it into the type it expects, so large typed results are
    decoded once, in C, with their bounds enforced by the type.
    """

    id: RequestId
    value: msgspec.Raw


class Failure(Message, tag="failure", kw_only=True):
    """Failed answer to the host request `id`."""

    id: RequestId
    error: ErrorInfo


class CdpEvent(Message, tag="cdp.event", kw_only=True):
    tab_id: TabId
    session_id: Annotated[str, msgspec.Meta(max_length=256)] | None = None
    method: Annotated[str, msgspec.Meta(max_length=128)]
    params: dict[str, Any] = {}


class CdpDetached(Message, tag="cdp.detached", kw_only=True):
    """chrome.debugger.onDetach: `reason` is "canceled_by_user" or "target_closed"."""

    tab_id: TabId
    reason: Name


class BrowserEvent(Message, tag="browser.event", kw_only=True):
    """A browser-side happening the host tracks: tab created/updated/removed/replaced,
    permission removed, manual user input in a driven tab, a navigation the guard blocked, a tab
    a page opened, ..."""

    name: Name
    data: dict[str, Any] = {}


class UiConnect(Message, tag="ui.connect", kw_only=True):
    """An extension page opened a Port to the service worker."""

    client_id: Annotated[str, msgspec.Meta(min_length=1, max_length=128)]
    # The sender URL as Chrome reports it (port.sender.url): the host accepts only our own pages.
    sender_url: ShortText
    page: Name


class UiDisconnect(Message, tag="ui.disconnect", kw_only=True):
    client_id: Annotated[str, msgspec.Meta(min_length=1, max_length=128)]


class UiOp(Message, tag="ui.op", kw_only=True):
    """A UI operation from an extension page; `op` is validated against protocol.ui."""

    client_id: Annotated[str, msgspec.Meta(min_length=1, max_length=128)]
    op: dict[str, Any]


HostMessage = Union[
    Welcome,
    Fatal,
    ContentCall,
    BrowserCall,
    CdpCommand,
    CdpBatch,
    DiagCall,
    GuardInstall,
    UiEvent,
    Cancel,
    Ping,
    Pong,
    Chunk,
    ProtocolErrorReport,
]
"""Everything the host may send."""

ExtensionMessage = Union[
    Hello,
    Result,
    Failure,
    CdpEvent,
    CdpDetached,
    BrowserEvent,
    UiConnect,
    UiDisconnect,
    UiOp,
    Ping,
    Pong,
    Chunk,
    ProtocolErrorReport,
]
"""Everything the extension may send."""

HOST_MESSAGE_TYPES: tuple[type[Message], ...] = HostMessage.__args__  # type: ignore[attr-defined]
EXTENSION_MESSAGE_TYPES: tuple[type[Message], ...] = ExtensionMessage.__args__  # type: ignore[attr-defined]


def tag_of(cls: type[Message]) -> str:
    """The `type` value of a message class."""
    return cls.__struct_config__.tag  # type: ignore[return-value]
