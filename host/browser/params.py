"""Parameter types of the browser tools (L0, L1 and L2), as msgspec Structs.

Names are camelCase on the wire (what the model writes). The bounds here are the same as the
page executor's own checks (`extension/content/params.js`), so a call is refused identically at
both boundaries. `PARAMS_TYPES` maps each tool name to its Struct; these belong on the catalog's
`ToolSpec.params_type` once that seam is wired.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

import msgspec

from host.browser.errors import ToolFailure

REF_PATTERN = r"^s[0-9a-z]{1,32}_[0-9]{1,9}_[0-9]{1,9}$"
_DEEP = r"c[0-9a-z]{1,16}_[0-9]{1,9}_[0-9]{1,9}_[0-9]{1,9}"
ANY_REF_PATTERN = rf"^(s[0-9a-z]{{1,32}}_[0-9]{{1,9}}_[0-9]{{1,9}}|{_DEEP})$"

Ref = Annotated[str, msgspec.Meta(pattern=REF_PATTERN, max_length=64,
                                  description="A ref from the latest read_page output, e.g. s1a2b3_4_5.")]
AnyRef = Annotated[str, msgspec.Meta(pattern=ANY_REF_PATTERN, max_length=80,
                                     description="A ref from the latest read_page (s…) or read_page_deep (c…) output.")]
Coordinate = Annotated[float, msgspec.Meta(ge=0, le=100_000, description="CSS pixels from the viewport's top-left corner.")]
Element = Annotated[str, msgspec.Meta(min_length=1, max_length=500,
                                      description="Human-readable description of the target, shown for approval.")]
TabId = Annotated[int, msgspec.Meta(ge=0, le=2**31 - 1, description="A tab id from tabs_list; defaults to the task's tab.")]
Url = Annotated[str, msgspec.Meta(min_length=1, max_length=8192, description="An http(s) URL.")]
MaxResults = Annotated[int, msgspec.Meta(ge=1, le=100)]
TypedText = Annotated[str, msgspec.Meta(max_length=100_000)]
OptionValue = Annotated[str, msgspec.Meta(max_length=1000)]
SearchText = Annotated[str, msgspec.Meta(min_length=1, max_length=1000)]
TimeMs = Annotated[int, msgspec.Meta(ge=0, le=30_000)]
Pixels = Annotated[int, msgspec.Meta(ge=0, le=100_000)]
Epoch = Annotated[float, msgspec.Meta(ge=0, le=1e15)]


class Params(msgspec.Struct, forbid_unknown_fields=True, rename="camel", kw_only=True, omit_defaults=True):
    """Base of every tool's parameters."""


class PageParams(Params, kw_only=True):
    """Tools that act on one tab: `tabId` picks it, else the task's tab."""

    tab_id: TabId | None = None


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

    def __post_init__(self) -> None:
        if self.title is None and self.color is None and self.collapsed is None:
            raise ValueError("give at least one of title, color, collapsed")


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

    def __post_init__(self) -> None:
        if self.text is not None and isinstance(self.text_gone, str):
            raise ValueError("give either text (optionally with textGone: true) or textGone as a string, not both")
        if self.text_gone is True and self.text is None:
            raise ValueError("textGone: true needs text")
        if self.text is None and self.text_gone is None and self.time_ms is None:
            raise ValueError("give text, textGone or timeMs")


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


class PressKeyParams(PageParams, kw_only=True):
    key: Annotated[str, msgspec.Meta(min_length=1, max_length=64, description="A key or combination: Enter, Tab, Control+a.")]
    ref: AnyRef | None = None


class BatchAction(msgspec.Struct, forbid_unknown_fields=True, rename="camel", kw_only=True, omit_defaults=True,
                  tag_field="action"):
    """One step of batch_actions."""


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
    pattern=rf"^(viewport|fullpage|s[0-9a-z]{{1,32}}_[0-9]{{1,9}}_[0-9]{{1,9}}|{_DEEP})$", max_length=80,
    description="viewport, fullpage, or a ref whose element is captured.")]


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


PARAMS_TYPES: dict[str, type[Params]] = {
    "tabs_list": TabsListParams,
    "tab_open": TabOpenParams,
    "tab_focus": TabFocusParams,
    "tab_close": TabCloseParams,
    "navigate": NavigateParams,
    "go_back": HistoryMoveParams,
    "go_forward": HistoryMoveParams,
    "history_search": HistorySearchParams,
    "bookmarks_search": BookmarksSearchParams,
    "top_sites": TopSitesParams,
    "sessions_recently_closed": RecentlyClosedParams,
    "session_restore": SessionRestoreParams,
    "tab_groups_list": TabGroupsListParams,
    "tabs_group": TabsGroupParams,
    "tab_group_update": TabGroupUpdateParams,
    "read_page": ReadPageParams,
    "find_in_page": FindInPageParams,
    "extract": ExtractParams,
    "get_selection": GetSelectionParams,
    "scroll": ScrollParams,
    "wait_for": WaitForParams,
    "click": ClickParams,
    "type": TypeParams,
    "select_option": SelectOptionParams,
    "hover": HoverParams,
    "press_key": PressKeyParams,
    "batch_actions": BatchActionsParams,
    "read_page_deep": ReadPageDeepParams,
    "screenshot": ScreenshotParams,
    "click_trusted": ClickTrustedParams,
    "type_trusted": TypeTrustedParams,
    "click_xy": ClickXYParams,
    "drag": DragParams,
    "upload_file": UploadFileParams,
    "run_javascript": RunJavascriptParams,
}
"""Tool name -> parameter Struct, for every browser tool this gateway can run."""

# Keys the model writes that the page executor must never see.
_HOST_ONLY_KEYS = ("tabId", "element", "fromChar")


def decode_params(tool: str, raw: Any) -> Params:
    """Validate `raw` (decoded JSON) as the parameters of `tool`.

    Raises ToolFailure `invalid_params` naming the bad field's path (`$.maxTokens`), or
    `unknown_tool` when this gateway has no such tool.
    """
    kind = PARAMS_TYPES.get(tool)
    if kind is None:
        raise ToolFailure("unknown_tool", f"no browser tool named {tool!r}", phase="validate")
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ToolFailure("invalid_params", f"Invalid parameters for {tool}: expected an object, got {type(raw).__name__}",
                          phase="validate")
    try:
        return msgspec.convert(raw, kind)
    except msgspec.ValidationError as exc:
        raise ToolFailure("invalid_params", f"Invalid parameters for {tool}: {exc}", phase="validate") from None


def content_params(params: Params) -> dict[str, Any]:
    """The parameters as the page executor takes them: camelCase, with `tabId`, `element` and
    `fromChar` removed (also inside each batch action)."""
    wire = msgspec.to_builtins(params)
    for key in _HOST_ONLY_KEYS:
        wire.pop(key, None)
    for action in wire.get("actions", ()):
        action.pop("element", None)
    return wire


def params_schema(tool: str) -> dict[str, Any]:
    """The JSON Schema a model provider gets for `tool`'s parameters."""
    kind = PARAMS_TYPES[tool]
    (schema,), components = msgspec.json.schema_components([kind], ref_template="#/$defs/{name}")
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        schema = dict(components.pop(name))
    if components:
        schema["$defs"] = components
    return schema
