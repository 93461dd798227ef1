"""What the page executor sends back, as msgspec Structs: a result that does not fit is refused
at the boundary instead of half-used. Names are camelCase on the wire."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

Short = Annotated[str, msgspec.Meta(max_length=1000)]
Count = Annotated[int, msgspec.Meta(ge=0)]
MAX_HIDDEN_LINES = 20000  # the page executor sends at most this many (MAX_HIDDEN_HASHES)


class Wire(msgspec.Struct, rename="camel", forbid_unknown_fields=True, kw_only=True):
    """Base of the page executor's result types."""


class Destination(Wire, kw_only=True):
    """Where acting on an element can take the page: a link's target or the form its value is
    sent with (as the browser resolved it; the host judges it)."""

    url: Annotated[str, msgspec.Meta(max_length=8192)]
    method: Annotated[str, msgspec.Meta(max_length=16)] = "GET"
    new_tab: bool = False


class SnapshotRef(Wire, kw_only=True):
    """One ref of a snapshot with the hint the host keeps. A form field adds its facts: a key
    naming the element across snapshots, its autocomplete and name attributes, and either
    `credential` (its value is never sent) or the tail of its current value."""

    ref: Annotated[str, msgspec.Meta(max_length=64)]
    role: Short
    name: Short = ""
    tag: Short = ""
    input_type: Short | None = None
    label: Short | None = None
    placeholder: Short | None = None
    destination: Destination | None = None
    element_key: Annotated[str, msgspec.Meta(max_length=32)] | None = None
    autocomplete: Short | None = None
    field_name: Short | None = None
    credential: bool = False
    value: Annotated[str, msgspec.Meta(max_length=1000)] | None = None
    # What tells a commit from a step: it submits its form, the kinds of field that form
    # carries (autocomplete tokens or input types), the nearest heading above it.
    submits: bool = False
    form_fields: Annotated[list[Annotated[str, msgspec.Meta(max_length=64)]], msgspec.Meta(max_length=30)] = []
    heading: Annotated[str, msgspec.Meta(max_length=200)] | None = None

    def __post_init__(self) -> None:
        if self.credential and self.value is not None:
            raise ValueError("a credential field's value is never sent")


class PageSnapshot(Wire, kw_only=True):
    """A snapshot taken by the page executor (a read, or the post-write one)."""

    id: Short
    doc_token: Annotated[str, msgspec.Meta(pattern=r"^[0-9a-z]{1,32}$")]
    snapshot_id: Count
    text: str
    refs: list[SnapshotRef] = []
    ref_count: Count = 0
    truncated_nodes: Count = 0
    truncated_refs: Count = 0
    # The hashes of the lines the budget left out (`diff.line_hash`), so that the next diff does
    # not take a line merely left out for one added or removed.
    hidden: Annotated[list[Annotated[str, msgspec.Meta(pattern=r"^[0-9a-z]{1,8}$")]],
                      msgspec.Meta(max_length=MAX_HIDDEN_LINES)] = []


class DialogReport(Wire, kw_only=True):
    """A dialog (or window.open) the MAIN-world patch intercepted during a write."""

    kind: Short
    message: Annotated[str, msgspec.Meta(max_length=4000)] = ""
    answer: Any = None


class ExecuteResult(Wire, kw_only=True):
    """The page executor's answer to one tool call."""

    result_text: str
    snapshot: PageSnapshot | None = None
    page_stabilized: bool = True
    evidence: dict[str, Any] = {}
    dialogs: list[DialogReport] = []
    opens_tabs: list[Annotated[str, msgspec.Meta(max_length=8192)]] = []
    steps: list[dict[str, Any]] = []
    scroll: dict[str, Any] | None = None
    extracted: dict[str, Any] | None = None
    rect: dict[str, Any] | None = None
