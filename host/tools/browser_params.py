"""Parameter types of the browser tools (L0, L1 and L2), as msgspec Structs.

Each is the `params_type` of its tool's declaration in `host.tools.catalog`. The page executor
checks the same bounds: its copy is generated from these Structs (`extension/generated/tools.js`),
so a call is refused identically at both boundaries.
"""

from __future__ import annotations

from typing import Annotated, Literal, Union

import msgspec

from host.tools.params import PageParams, Params, Rule, SearchText, TabId, Url

# The shapes of refs from read_page (s…) and read_page_deep (c…), for the code that parses them.
REF_PATTERN = r"^s[0-9a-z]{1,32}_[0-9]{1,9}_[0-9]{1,9}$"
_DEEP = r"c[0-9a-z]{1,16}_[0-9]{1,9}_[0-9]{1,9}_[0-9]{1,9}"
DEEP_REF_PATTERN = rf"^{_DEEP}$"

# A ref parameter takes any short token: one of another shape (an older format, a ref the model
# made up or copied from elsewhere) names nothing on the page, which resolving it reports as
# `stale_ref` with the advice to read the page again, rather than as a malformed call.
REF_MAX = 80
Ref = Annotated[str, msgspec.Meta(min_length=1, max_length=REF_MAX,
                                  description="A ref from the latest read_page output, e.g. s1a2b3_4_5.")]
AnyRef = Annotated[str, msgspec.Meta(min_length=1, max_length=REF_MAX,
                                     description="A ref from the latest read_page (s…) or read_page_deep (c…) output.")]
Coordinate = Annotated[float, msgspec.Meta(ge=0, le=100_000, description="CSS pixels from the viewport's top-left corner.")]
Element = Annotated[str, msgspec.Meta(min_length=1, max_length=500,
                                      description="Human-readable description of the target, shown for approval.")]
MaxResults = Annotated[int, msgspec.Meta(ge=1, le=100)]
TypedText = Annotated[str, msgspec.Meta(max_length=100_000)]
OptionValue = Annotated[str, msgspec.Meta(max_length=1000)]
TimeMs = Annotated[int, msgspec.Meta(ge=0, le=30_000)]
Pixels = Annotated[int, msgspec.Meta(ge=0, le=100_000)]
Epoch = Annotated[float, msgspec.Meta(ge=0, le=1e15)]


# ---------------------------------------------------------------- L0


class TabsListParams(Params):
    pass


class TabOpenParams(Params, kw_only=True):
    url: Url


class TabFocusParams(Params, kw_only=True):
    tab_id: TabId


class TabCloseParams(Params, kw_only=True):
    tab_id: TabId


class NavigateParams(PageParams, kw_only=True):
    url: Url


class HistoryMoveParams(PageParams):
    pass


class HistorySearchParams(Params, kw_only=True):
    query: Annotated[str, msgspec.Meta(max_length=1000)] = ""
    start_time: Epoch | None = None
    end_time: Epoch | None = None
    max_results: MaxResults = 20


class BookmarksSearchParams(Params, kw_only=True):
    query: SearchText
    max_results: MaxResults = 20


class TopSitesParams(Params, kw_only=True):
    max_results: MaxResults = 20


class RecentlyClosedParams(Params, kw_only=True):
    max_results: Annotated[int, msgspec.Meta(ge=1, le=25)] = 10


class SessionRestoreParams(Params, kw_only=True):
    session_id: Annotated[str, msgspec.Meta(min_length=1, max_length=256)]


class TabGroupsListParams(Params):
    pass


class TabsGroupParams(Params, kw_only=True):
    tab_ids: Annotated[list[TabId], msgspec.Meta(min_length=1, max_length=100)]
    group_id: Annotated[int, msgspec.Meta(ge=0, le=2**31 - 1)] | None = None


GroupColor = Literal["grey", "blue", "red", "yellow", "green", "pink", "purple", "cyan", "orange"]


class TabGroupUpdateParams(Params, kw_only=True):
    group_id: Annotated[int, msgspec.Meta(ge=0, le=2**31 - 1)]
    title: Annotated[str, msgspec.Meta(max_length=256)] | None = None
    color: GroupColor | None = None
    collapsed: bool | None = None

    rules = (Rule("at_least_one", ("title", "color", "collapsed"), "give at least one of title, color, collapsed"),)


# ---------------------------------------------------------------- L1 reads


class ReadPageParams(PageParams, kw_only=True):
    mode: Literal["snapshot", "article", "full"] = "snapshot"
    max_tokens: Annotated[int, msgspec.Meta(ge=0, le=6000)] = 3000


class FindInPageParams(PageParams, kw_only=True):
    query: Annotated[str, msgspec.Meta(min_length=1, max_length=500)]


class ExtractParams(PageParams, kw_only=True):
    scope: Ref | None = None
    from_char: Annotated[int, msgspec.Meta(ge=0, le=200_000)] = 0


class GetSelectionParams(PageParams):
    pass


class ScrollParams(PageParams, kw_only=True):
    target: Ref | None = None
    direction: Literal["up", "down", "left", "right"]
    amount: Literal["page", "end"] | Pixels = "page"


class WaitForParams(PageParams, kw_only=True):
    text: SearchText | None = None
    text_gone: bool | SearchText | None = None
    time_ms: TimeMs | None = None

    rules = (
        Rule("not_together", ("text", "textGone"),
             "give either text (optionally with textGone: true) or textGone as a string, not both",
             when={"textGone": "string"}),
        Rule("needs", ("textGone", "text"), "textGone: true needs text", when={"textGone": True}),
        Rule("at_least_one", ("text", "textGone", "timeMs"), "give text, textGone or timeMs"),
    )


# ---------------------------------------------------------------- L1 writes


class ClickParams(PageParams, kw_only=True):
    element: Element
    ref: Ref
    button: Literal["left", "right"] = "left"
    double_click: bool = False


class TypeParams(PageParams, kw_only=True):
    element: Element
    ref: Ref
    text: TypedText
    mode: Literal["replace", "append"] = "replace"
    submit: bool = False
    slowly: bool = False


class SelectOptionParams(PageParams, kw_only=True):
    element: Element
    ref: Ref
    values: Annotated[list[OptionValue], msgspec.Meta(min_length=1, max_length=100)]


class HoverParams(PageParams, kw_only=True):
    element: Element
    ref: Ref


MAX_KEY_REPEAT = 50


class PressKeyParams(PageParams, kw_only=True):
    key: Annotated[str, msgspec.Meta(min_length=1, max_length=64, description="A key or combination: Enter, Tab, Control+a.")]
    ref: AnyRef | None = None
    repeat: Annotated[int, msgspec.Meta(ge=1, le=MAX_KEY_REPEAT, description="How many times to press it (a slider's steps); "
                                        "each press goes where the focus is then, checked first.")] = 1


class BatchAction(msgspec.Struct, forbid_unknown_fields=True, rename="camel", kw_only=True, omit_defaults=True,
                  tag_field="action"):
    """One step of a batch of page actions."""


class BatchClick(BatchAction, tag="click", kw_only=True):
    element: Element
    ref: Ref
    button: Literal["left", "right"] = "left"
    double_click: bool = False


class BatchType(BatchAction, tag="type", kw_only=True):
    element: Element
    ref: Ref
    text: TypedText
    mode: Literal["replace", "append"] = "replace"
    submit: bool = False
    slowly: bool = False


class BatchSelect(BatchAction, tag="select_option", kw_only=True):
    element: Element
    ref: Ref
    values: Annotated[list[OptionValue], msgspec.Meta(min_length=1, max_length=100)]


class BatchActionsParams(PageParams, kw_only=True):
    actions: Annotated[list[Union[BatchClick, BatchType, BatchSelect]], msgspec.Meta(min_length=1, max_length=4)]


# ---------------------------------------------------------------- L2


class ReadPageDeepParams(PageParams, kw_only=True):
    max_tokens: Annotated[int, msgspec.Meta(ge=0, le=6000)] = 3000


ScreenshotTarget = Annotated[str, msgspec.Meta(
    min_length=1, max_length=REF_MAX, description="viewport, fullpage, or a ref whose element is captured.")]


class ScreenshotParams(PageParams, kw_only=True):
    target: ScreenshotTarget = "viewport"
    format: Literal["png", "jpeg"] = "png"
    quality: Annotated[int, msgspec.Meta(ge=0, le=100)] | None = None
    annotate: bool = False


class ClickTrustedParams(PageParams, kw_only=True):
    element: Element
    ref: AnyRef
    button: Literal["left", "right", "middle"] = "left"
    double_click: bool = False


class TypeTrustedParams(PageParams, kw_only=True):
    element: Element
    ref: AnyRef
    text: TypedText
    mode: Literal["replace", "append"] = "replace"
    submit: bool = False
    # Accepted so that a `type` call escalates with the same parameters; trusted typing always
    # sends one key event pair per character.
    slowly: bool = False


class Point(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    x: Coordinate
    y: Coordinate


class ClickXYParams(PageParams, kw_only=True):
    x: Coordinate
    y: Coordinate
    element: Element | None = None
    button: Literal["left", "right", "middle"] = "left"
    double_click: bool = False


class DragParams(PageParams, kw_only=True):
    start: Point = msgspec.field(name="from")
    to: Point
    element: Element | None = None


class UploadFileParams(PageParams, kw_only=True):
    element: Element
    ref: AnyRef
    attachment_id: Annotated[str, msgspec.Meta(pattern=r"^att-[a-z]{16}$", description="An attachment the user provided.")]


class RunJavascriptParams(PageParams, kw_only=True):
    code: Annotated[str, msgspec.Meta(min_length=1, max_length=20_000,
                                      description="The body of an async function: `return` gives the result.")]
    timeout_ms: Annotated[int, msgspec.Meta(ge=100, le=30_000)] = 5_000

