"""The catalog: every tool Tabwarden knows, declared once (see `ToolSpec` for the fields).

`fetch_url` is a URL-bearing *write*, judged by its destination like `navigate`: a host-side
request can carry page data to any server. MCP tools are not listed here; `lookup` synthesises
them (always writes, whatever the server says).
"""

from __future__ import annotations

from types import MappingProxyType

from host.tools import browser_params as p
from host.tools import builtin_params as bp
from host.tools.spec import Runner, ToolSpec

MCP_PREFIX = "mcp__"
MCP_RUNNER = Runner("mcp", "host.mcp.tools:call_tool")


def _t(name: str, level: str, effects: str, label: str, description: str, **kw) -> ToolSpec:
    return ToolSpec(name=name, label=label, level=level, effects=effects, description=description, **kw)  # type: ignore[arg-type]


def _browser(function: str) -> Runner:
    return Runner("browser", f"host.browser.{function}")


def _builtin(function: str) -> Runner:
    return Runner("builtins", f"host.builtins.tools:{function}")


def _interaction(kind: str) -> Runner:
    return Runner("interactions", f"host.engine.interaction_kinds:{kind}")


_L0 = "l0_tools:"
_READ = "page_reads:read_tool"
_WRITE = "page_writes:run_write"
_L2 = "l2.tools:"

_TOOLS: tuple[ToolSpec, ...] = (
    # L0: tabs and browser metadata through extension APIs (no page injection).
    _t("tabs_list", "L0", "read", "List tabs", "List every tab in every window, marking the one the user is looking at.",
       originless=True, params_type=p.TabsListParams, runner=_browser(_L0 + "tabs_list")),
    _t("tab_open", "L0", "write", "Open tab", "Open (or reuse) a background tab at a URL.", category="navigate",
       url_param="url", params_type=p.TabOpenParams, runner=_browser(_L0 + "tab_open")),
    _t("tab_focus", "L0", "write", "Focus tab", "Bring a tab to the front.", category="navigate",
       params_type=p.TabFocusParams, target="tab", runner=_browser(_L0 + "tab_focus")),
    _t("tab_close", "L0", "write", "Close tab", "Close a tab.", category="navigate",
       params_type=p.TabCloseParams, target="tab", runner=_browser(_L0 + "tab_close")),
    _t("navigate", "L0", "write", "Navigate", "Load a URL in a tab (from an empty or new-tab page too); the URL the tab already shows is reloaded.", category="navigate", url_param="url",
       params_type=p.NavigateParams, target="routed", runner=_browser(_L0 + "navigate")),
    _t("go_back", "L0", "write", "Go back",
       "Go back one entry in a tab's history (entries a page added itself count too).", category="navigate",
       params_type=p.HistoryMoveParams, target="history", runner=_browser(_L0 + "go_back")),
    _t("go_forward", "L0", "write", "Go forward",
       "Go forward one entry in a tab's history (entries a page added itself count too).", category="navigate",
       params_type=p.HistoryMoveParams, target="history", runner=_browser(_L0 + "go_forward")),
    _t("history_search", "L0", "read", "Search history", "Search the browsing history.", originless=True,
       params_type=p.HistorySearchParams, runner=_browser(_L0 + "history_search")),
    _t("bookmarks_search", "L0", "read", "Search bookmarks", "Search saved bookmarks.", originless=True,
       params_type=p.BookmarksSearchParams, runner=_browser(_L0 + "bookmarks_search")),
    _t("top_sites", "L0", "read", "Top sites", "Read the browser's most visited sites.", originless=True,
       params_type=p.TopSitesParams, runner=_browser(_L0 + "top_sites")),
    _t("sessions_recently_closed", "L0", "read", "Recently closed", "List recently closed tabs and windows.",
       originless=True, params_type=p.RecentlyClosedParams, runner=_browser(_L0 + "sessions_recently_closed")),
    _t("session_restore", "L0", "write", "Restore session", "Reopen a recently closed tab or window.",
       category="navigate", params_type=p.SessionRestoreParams, target="closed",
       runner=_browser(_L0 + "session_restore")),
    _t("tab_groups_list", "L0", "read", "List tab groups", "List the tab groups of every window.", originless=True,
       params_type=p.TabGroupsListParams, runner=_browser(_L0 + "tab_groups_list")),
    _t("tabs_group", "L0", "write", "Group tabs", "Put tabs into a new or existing group.", category="organize",
       params_type=p.TabsGroupParams, runner=_browser(_L0 + "tabs_group")),
    _t("tab_group_update", "L0", "write", "Update tab group", "Change a tab group's title, colour or collapsed state.",
       category="organize", params_type=p.TabGroupUpdateParams, runner=_browser(_L0 + "tab_group_update")),
    # L1: the content script.
    _t("read_page", "L1", "read", "Read page", "Snapshot the page with element refs (mode full: text runs whole, not cut at 120 "
       "characters; mode article: the main text only).",
       params_type=p.ReadPageParams, target="page", runner=_browser(_READ), page_executor=True),
    _t("find_in_page", "L1", "read", "Find in page", "Find text on the page and return matching refs.",
       params_type=p.FindInPageParams, target="page", runner=_browser(_READ), page_executor=True),
    _t("extract", "L1", "read", "Extract", "Turn the page or a subtree into Markdown.",
       params_type=p.ExtractParams, target="page", runner=_browser("page_reads:extract"), page_executor=True),
    _t("get_selection", "L1", "read", "Get selection", "Read the user's current selection.",
       params_type=p.GetSelectionParams, target="page", runner=_browser(_READ), page_executor=True),
    _t("scroll", "L1", "read", "Scroll", "Scroll the page or an element.",
       params_type=p.ScrollParams, target="page", runner=_browser(_READ), page_executor=True),
    _t("wait_for", "L1", "read", "Wait for", "Wait for text to appear or disappear, or for a time.",
       params_type=p.WaitForParams, target="page", runner=_browser(_READ), page_executor=True),
    _t("click", "L1", "write", "Click", "Click an element by ref.", category="click",
       params_type=p.ClickParams, target="page", runner=_browser(_WRITE), page_executor=True, ref_recovery=True),
    _t("type", "L1", "write", "Type", "Type text into an element by ref (key by key with slowly; a field that suggests as it is "
       "typed in, a combobox, always gets its keys).", category="fill",
       params_type=p.TypeParams, target="page", runner=_browser(_WRITE), page_executor=True, ref_recovery=True, escalation="type_trusted"),
    _t("select_option", "L1", "write", "Select option", "Choose options in a select element.", category="fill",
       params_type=p.SelectOptionParams, target="page", runner=_browser(_WRITE), page_executor=True, ref_recovery=True),
    _t("hover", "L1", "write", "Hover", "Move the pointer over an element.", category="interact",
       params_type=p.HoverParams, target="page", runner=_browser(_WRITE), page_executor=True),
    _t("batch_actions", "L1", "write", "Batch actions", "Run up to four click/type/select actions in order.",
       category="fill", params_type=p.BatchActionsParams, target="page", runner=_browser(_WRITE), page_executor=True),
    _t("run_javascript", "L1", "write", "Run JavaScript", "Run script in the page's main world, as the body of an async "
       "function (`return` gives the result, shown as JSON). Denied unless the user allowed it for the site; the page's "
       "Content Security Policy may refuse it.", category="eval",
       params_type=p.RunJavascriptParams, target="page", runner=_browser("page_script:run_javascript")),
    # L2: the debugger bridge (trusted input, deep reads).
    _t("press_key", "L2", "write", "Press key", "Press a key combination (Enter, Tab, Control+a, Shift+Tab...) with trusted "
       "key events, on the focused element (marked [focused] in read_page) or on `ref` (focused first). Widgets are set "
       "by keys: a slider or spin button (arrows, Home, End, PageUp, PageDown), a tree, grid, menu or tab list (arrows); "
       "the answer says where the focus is and what it holds after.", category="fill",
       params_type=p.PressKeyParams, target="page", runner=_browser(_L2 + "press_key"),
       page_executor=True),  # its synthetic fallback
    _t("read_page_deep", "L2", "read", "Read page (deep)", "Snapshot the full accessibility tree through the debugger: "
       "cross-origin frames and closed shadow roots included, plus clickable elements found by their event listeners; "
       "a long page is read as far as maxTokens lets the answer show. "
       "Its refs (c...) work with click_trusted, type_trusted, press_key, screenshot and upload_file.",
       params_type=p.ReadPageDeepParams, target="page", runner=_browser(_L2 + "read_page_deep")),
    _t("screenshot", "L2", "read", "Screenshot", "Capture the viewport, the full page or one element (target: a ref), "
       "optionally with the current refs labelled.",
       params_type=p.ScreenshotParams, target="page", runner=_browser(_L2 + "screenshot")),
    _t("click_trusted", "L2", "write", "Click (trusted)", "Click an element by ref (read_page or read_page_deep) with "
       "trusted mouse input, for pages that ignore synthetic clicks.", category="click",
       params_type=p.ClickTrustedParams, target="page", runner=_browser(_L2 + "click_trusted")),
    _t("type_trusted", "L2", "write", "Type (trusted)", "Type text into an element by ref with trusted key events, for "
       "pages that ignore synthetic input.", category="fill",
       params_type=p.TypeTrustedParams, target="page", runner=_browser(_L2 + "type_trusted")),
    _t("click_xy", "L2", "write", "Click at point", "Click at viewport coordinates in CSS pixels (canvases and other "
       "places without a ref; find the point with a screenshot).", category="click",
       params_type=p.ClickXYParams, target="page", runner=_browser(_L2 + "click_xy")),
    _t("drag", "L2", "write", "Drag", "Drag with the mouse from one viewport point to another (CSS pixels).",
       category="interact", params_type=p.DragParams, target="page", runner=_browser(_L2 + "drag")),
    _t("upload_file", "L2", "write", "Upload file", "Put a file the user attached to this task into a file input.",
       category="upload", params_type=p.UploadFileParams, target="page", runner=_browser(_L2 + "upload_file")),
    # Built-ins run by the host itself.
    _t("fetch_url", "builtin", "write", "Fetch URL",
       "Fetch a public web page or text file from the host, not through the browser (no cookies, no logins), "
       "and return it as Markdown or plain text, paged with fromChar. Local and private network addresses are "
       "refused, and redirects are followed only within the same origin.",
       category="navigate", url_param="url", host_fetch=True, recovery="retry-safe",
       result_trust="untrusted", result_provenance="page", params_type=bp.FetchUrlParams, target="destination",
       runner=_builtin("fetch_url")),
    _t("download", "builtin", "write", "Download",
       "Download a URL into the user's downloads folder through the browser (with the browser's cookies); "
       "returns the saved file's name once the download has finished.",
       category="download", url_param="url", params_type=bp.DownloadParams, target="destination",
       runner=_builtin("download")),
    _t("memory_read", "builtin", "read", "Read memory",
       "Read saved memories (short notes kept across tasks): one key, those matching a query, or all.",
       originless=True, always_allowed=True, params_type=bp.MemoryReadParams, runner=_builtin("memory_read")),
    _t("memory_write", "builtin", "write", "Write memory",
       "Save a short note under a key for later tasks, replace it, or forget it (value null). Never store "
       "passwords, codes or other secrets.",
       category="memory", originless=True, params_type=bp.MemoryWriteParams, runner=_builtin("memory_write")),
    _t("load_skill", "builtin", "read", "Load skill",
       "Load one of the skills the user installed (listed under Skills in your instructions): its instructions, "
       "or with resource one text file from its references/ or assets/ folder.",
       originless=True, always_allowed=True, params_type=bp.LoadSkillParams,
       runner=Runner("skills", "host.skills.tool:load_skill")),
    _t("artifact", "builtin", "write", "Create artifact",
       "Save a UTF-8 text file (a report, a CSV, notes) to this task; the user can download it from the side panel.",
       originless=True, params_type=bp.ArtifactParams, runner=_builtin("artifact")),
    # Interactions: the run waits on the user or a condition.
    _t("ask_user", "builtin", "read", "Ask the user",
       "Ask the user a question and wait for the answer. Use it when the task is ambiguous or needs a choice only "
       "the user can make. Make it the only tool call of your answer.",
       originless=True, always_allowed=True, interaction=True, params_type=bp.AskUserParams,
       runner=_interaction("ask_user")),
    _t("request_user_action", "builtin", "read", "Request user action",
       "Hand over to the user for something only a person may do: log in, solve a captcha, pay, confirm a "
       "two-factor prompt. The task waits until the user reports it done; you never learn what they typed. "
       "Make it the only tool call of your answer.",
       originless=True, always_allowed=True, interaction=True, params_type=bp.RequestUserActionParams,
       runner=_interaction("request_user_action")),
    _t("schedule_resume", "builtin", "read", "Schedule resume",
       "Pause the task and continue it after delaySeconds, e.g. to look at a page again later. Make it the only "
       "tool call of your answer.",
       originless=True, always_allowed=True, interaction=True, params_type=bp.ScheduleResumeParams,
       runner=_interaction("schedule_resume")),
    _t("watch_page", "builtin", "read", "Watch page",
       "Wait until a condition holds on a tab (text appears, text disappears, the URL matches a pattern), for at "
       "most timeoutSeconds; for slow work such as an export or a status change. Make it the only tool call of "
       "your answer.",
       interaction=True, params_type=bp.WatchPageParams, target="watched", runner=_interaction("watch_page")),
)

# Other names a tool answers to (the artifact tool was once called `artifact_create`).
ALIASES: MappingProxyType[str, str] = MappingProxyType({"artifact_create": "artifact"})

CATALOG: MappingProxyType[str, ToolSpec] = MappingProxyType({t.name: t for t in _TOOLS})


def mcp_tool_name(server: str, tool: str) -> str:
    """The registered name of an MCP server's tool: `mcp__{server}__{tool}`."""
    return f"{MCP_PREFIX}{server}__{tool}"


def mcp_tool(server: str, tool: str, *, title: str | None = None, description: str | None = None,
             input_schema: dict | None = None) -> ToolSpec:
    """Declare an MCP tool. Always a never-retry write with untrusted MCP results: server
    annotations such as `readOnlyHint` are not believed; `title` is only the label and
    `input_schema` the server's parameter schema."""
    name = mcp_tool_name(server, tool)
    return ToolSpec(
        name=name,
        label=title or name,
        level="mcp",
        effects="write",
        description=description or f"Tool {tool!r} of MCP server {server!r}.",
        category="mcp",
        recovery="never-retry",
        result_trust="untrusted",
        result_provenance="mcp",
        input_schema=input_schema,
        target="server",
        runner=MCP_RUNNER,
    )


def remember_mcp_tool(spec: ToolSpec) -> None:
    """Keep the spec of a tool a server listed (its label and description) for `lookup`; it must
    come from `mcp_tool`, so it stays a never-retry write whatever the server claimed."""
    if spec.level != "mcp" or spec.effects != "write" or not spec.name.startswith(MCP_PREFIX):
        raise ValueError(f"{spec.name}: not an MCP tool spec")
    parts = _split_mcp(spec.name)
    if parts is None:
        raise ValueError(f"{spec.name}: not an mcp__<server>__<tool> name")
    if len(_MCP_CACHE) > 4096:
        _MCP_CACHE.clear()
    _MCP_CACHE[parts] = spec


def _split_mcp(name: str) -> tuple[str, str] | None:
    rest = name[len(MCP_PREFIX):]
    server, sep, tool = rest.partition("__")
    return (server, tool) if sep and server and tool else None


def lookup(name: str) -> ToolSpec | None:
    """The spec of a tool by name (aliases resolved, MCP names synthesised); None if unknown."""
    spec = CATALOG.get(name)
    if spec is not None:
        return spec
    alias = ALIASES.get(name)
    if alias is not None:
        return CATALOG[alias]
    if name.startswith(MCP_PREFIX):
        parts = _split_mcp(name)
        if parts is not None:
            return _mcp_cached(*parts)
    return None


def closest_name(name: str) -> str | None:
    """The catalogued tool name (or alias) nearest to a misspelt `name`, or None when none is close."""
    import difflib

    found = difflib.get_close_matches(name, [*CATALOG, *ALIASES], n=1, cutoff=0.6)
    return found[0] if found else None


def unknown_name_hint(name: str) -> str:
    """`; did you mean 'click'?` for a misspelt tool name, else an empty string."""
    nearest = closest_name(name) if isinstance(name, str) else None
    return f"; did you mean {nearest!r}?" if nearest else ""


_MCP_CACHE: dict[tuple[str, str], ToolSpec] = {}


def _mcp_cached(server: str, tool: str) -> ToolSpec:
    spec = _MCP_CACHE.get((server, tool))
    if spec is None:
        if len(_MCP_CACHE) > 4096:  # bounded: names come from servers, not from us
            _MCP_CACHE.clear()
        spec = _MCP_CACHE[(server, tool)] = mcp_tool(server, tool)
    return spec
