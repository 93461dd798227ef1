import pytest

from host.tools import CATALOG, lookup, mcp_tool
from host.tools.spec import ToolSpec

# Every tool's level and effects (name -> (level, effects)), written out apart from the catalog:
# what a tool is judged as must not change by accident, only here and there together.
NOTES_TABLE = {
    "tabs_list": ("L0", "read"), "tab_open": ("L0", "write"), "tab_focus": ("L0", "write"),
    "tab_close": ("L0", "write"), "navigate": ("L0", "write"), "go_back": ("L0", "write"),
    "go_forward": ("L0", "write"), "history_search": ("L0", "read"), "bookmarks_search": ("L0", "read"),
    "top_sites": ("L0", "read"), "sessions_recently_closed": ("L0", "read"), "tab_groups_list": ("L0", "read"),
    "session_restore": ("L0", "write"), "tabs_group": ("L0", "write"), "tab_group_update": ("L0", "write"),
    "read_page": ("L1", "read"), "find_in_page": ("L1", "read"), "extract": ("L1", "read"),
    "get_selection": ("L1", "read"), "scroll": ("L1", "read"), "wait_for": ("L1", "read"),
    "click": ("L1", "write"), "type": ("L1", "write"), "select_option": ("L1", "write"),
    "hover": ("L1", "write"), "batch_actions": ("L1", "write"), "run_javascript": ("L1", "write"),
    "press_key": ("L2", "write"), "read_page_deep": ("L2", "read"), "screenshot": ("L2", "read"),
    "click_trusted": ("L2", "write"), "type_trusted": ("L2", "write"), "click_xy": ("L2", "write"),
    "drag": ("L2", "write"), "upload_file": ("L2", "write"),
    "memory_read": ("builtin", "read"), "memory_write": ("builtin", "write"), "load_skill": ("builtin", "read"),
    "download": ("builtin", "write"), "artifact": ("builtin", "write"), "ask_user": ("builtin", "read"),
    "request_user_action": ("builtin", "read"), "watch_page": ("builtin", "read"),
    "schedule_resume": ("builtin", "read"),
    # fetch_url is a URL-bearing write (a host-side request can carry page data anywhere).
    "fetch_url": ("builtin", "write"),
}

# The action category of every write (what `category:<name>` rules match), written out the same way.
CATEGORY_TABLE = {
    "navigate": {"navigate", "tab_open", "tab_focus", "tab_close", "go_back", "go_forward", "session_restore"},
    "organize": {"tabs_group", "tab_group_update"},
    "click": {"click", "click_xy", "click_trusted"},
    "fill": {"type", "type_trusted", "select_option", "press_key", "batch_actions"},
    "eval": {"run_javascript"},
    "download": {"download"},
    "upload": {"upload_file"},
    "interact": {"hover", "drag"},
    "memory": {"memory_write"},
}


@pytest.mark.parametrize("name,expected", sorted(NOTES_TABLE.items()))
def test_catalog_matches_the_notes_table(name, expected):
    spec = lookup(name)
    assert spec is not None, name
    assert (spec.level, spec.effects) == expected


def test_catalog_has_nothing_undeclared():
    assert set(CATALOG) == set(NOTES_TABLE)


@pytest.mark.parametrize("category,tools", sorted(CATEGORY_TABLE.items()))
def test_categories_follow_the_table(category, tools):
    for tool in tools:
        assert lookup(tool).category == category


def test_reads_have_no_category_and_default_recovery():
    for spec in CATALOG.values():
        if spec.effects == "read":
            assert spec.category is None
            assert spec.recovery == "retry-safe"
    assert lookup("click").recovery == "never-retry"
    assert lookup("artifact").recovery == "never-retry"
    assert lookup("fetch_url").recovery == "retry-safe"  # a GET can be replayed


def test_result_trust_and_provenance_defaults():
    assert (lookup("memory_read").result_trust, lookup("memory_read").result_provenance) == ("trusted", "tool")
    assert (lookup("read_page").result_trust, lookup("read_page").result_provenance) == ("untrusted", "page")
    assert (lookup("fetch_url").result_trust, lookup("fetch_url").result_provenance) == ("untrusted", "page")


def test_url_bearing_tools():
    assert {n for n, s in CATALOG.items() if s.url_param} == {"navigate", "tab_open", "download", "fetch_url"}
    assert lookup("fetch_url").host_fetch and not lookup("navigate").host_fetch


def test_always_allowed_and_originless():
    assert {n for n, s in CATALOG.items() if s.always_allowed} == {
        "memory_read", "load_skill", "ask_user", "request_user_action", "schedule_resume"}
    for name in ("tabs_list", "memory_read", "load_skill", "memory_write", "ask_user", "request_user_action",
                 "schedule_resume", "artifact"):
        assert lookup(name).originless, name
    assert not lookup("watch_page").originless  # it resolves a tab target


# The writes judged at no origin, and why each must stay so: none loads a page or sends anything
# to a site. Every other write is judged where it acts or leads.
WRITES_WITHOUT_ORIGIN = {
    "memory_write": "the host's own notes, read back only by later tasks",
    "artifact": "a text file kept with the task in the host's store",
    "tabs_group": "moves tabs into a group of the tab strip; their pages are untouched",
    "tab_group_update": "a group's title, colour or collapsed state",
}


def test_no_write_is_judged_without_an_origin_unless_listed():
    judged_nowhere = {n for n, s in CATALOG.items()
                      if s.is_write and not s.url_param and (s.originless or s.target == "none")}
    assert judged_nowhere == set(WRITES_WITHOUT_ORIGIN)
    # Where history moves and restores lead is resolved before they are judged.
    assert (lookup("go_back").target, lookup("go_forward").target, lookup("session_restore").target) == (
        "history", "history", "closed")


def test_mcp_tools_are_synthesised_as_untrusted_writes():
    spec = lookup("mcp__github__list_issues")
    assert (spec.level, spec.effects, spec.category, spec.recovery) == ("mcp", "write", "mcp", "never-retry")
    assert (spec.result_trust, spec.result_provenance) == ("untrusted", "mcp")
    # Annotations are not believed: only the title is used, as the label.
    assert mcp_tool("github", "list_issues", title="List issues").effects == "write"
    assert lookup("mcp__") is None and lookup("mcp__server") is None
    assert lookup("no_such_tool") is None


def test_alias_resolves_to_the_same_declaration():
    assert lookup("artifact_create") is lookup("artifact")


def test_spec_validation():
    with pytest.raises(ValueError):
        ToolSpec(name="bad name", label="x", level="L1", effects="read", description="d")
    with pytest.raises(ValueError):
        ToolSpec(name="x", label="x", level="L1", effects="read", description="d", category="click")
    with pytest.raises(ValueError):
        ToolSpec(name="x", label="x", level="L9", effects="read", description="d")
    assert ToolSpec(name="x", label="x", level="L1", effects="write", description="d").params_type is None
