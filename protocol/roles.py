"""The role tables both page reads share: which ARIA roles a person operates (a ref of their
own), which are kept as structure, which are landmarks, and how names come from content.

`read_page` (the content script, through `extension/generated/roles.js`) and `read_page_deep`
(`host/browser/l2/ax_tree.py`) decide from these same sets, so the two reads agree on what is
actionable. Roles are the ARIA names; the deep read maps Chromium's own names onto them first.
"""

from __future__ import annotations

# Roles a person operates: every node with one gets a ref.
INTERACTIVE_ROLES = frozenset({
    "button", "checkbox", "combobox", "gridcell", "link", "listbox", "menuitem", "menuitemcheckbox",
    "menuitemradio", "option", "radio", "searchbox", "slider", "spinbutton", "switch", "tab", "textbox",
    "treeitem",
})

# Roles that are actionable only when focusable (a tab stop or focused by script): a feed's
# articles, a tab panel, a grid row in a tree grid, a dialog.
FOCUSABLE_STRUCTURE = frozenset({"article", "dialog", "alertdialog", "row", "tabpanel", "group", "region", "img"})

# Actionable roles whose children are listed below them (each child with its own ref when it
# is actionable itself); other actionable nodes are leaves named by their content.
DESCENDING_ROLES = frozenset({
    "combobox", "listbox", "tree", "treegrid", "grid", "treeitem", "menu", "menubar", "radiogroup", "tablist",
    "row", "article", "dialog", "alertdialog", "tabpanel", "group", "region", "form", "list", "table",
    "navigation", "feed", "main", "banner", "complementary", "contentinfo", "search", "toolbar",
})

# Structure shown only when it has a name (an unnamed group or figure says nothing).
NAMED_ONLY = frozenset({"figure", "group", "img", "tabpanel", "toolbar"})

# Landmarks: kept as structure with their names.
LANDMARK_ROLES = frozenset({
    "banner", "complementary", "contentinfo", "form", "main", "navigation", "region", "search",
})

# Roles kept as structure without a ref (landmarks included).
STRUCTURAL_ROLES = LANDMARK_ROLES | frozenset({
    "alert", "status", "alertdialog", "article", "dialog", "feed", "figure", "grid", "group", "heading", "img", "list", "listitem",
    "menu", "menubar", "radiogroup", "table", "tablist", "tabpanel", "toolbar", "tree", "treegrid",
    "progressbar", "meter",
})

# Roles whose accessible name comes from their content when nothing names them (ARIA "name
# from content").
NAME_FROM_CONTENT = frozenset({
    "button", "cell", "checkbox", "columnheader", "gridcell", "heading", "link", "menuitem", "menuitemcheckbox",
    "menuitemradio", "option", "radio", "row", "rowheader", "switch", "tab", "tooltip", "treeitem",
})

# Roles that add nothing of their content to an enclosing name (only their own label, or their
# value for the embedded controls): containers, landmarks and widgets with values.
CONTENT_NOT_IN_NAMES = frozenset({
    "alert", "alertdialog", "application", "article", "banner", "complementary", "contentinfo", "dialog",
    "document", "feed", "figure", "form", "grid", "group", "img", "listbox", "log", "main", "marquee", "math",
    "menu", "menubar", "meter", "navigation", "progressbar", "radiogroup", "region", "search", "searchbox",
    "scrollbar", "slider", "spinbutton", "status", "table", "tablist", "tabpanel", "textbox", "timer", "toolbar",
    "tree", "treegrid", "combobox",
})

# Roles that carry a value (aria-valuenow, aria-valuetext, min and max).
RANGE_ROLES = frozenset({"slider", "spinbutton", "progressbar", "meter", "scrollbar"})


def tables() -> dict[str, list[str]]:
    """Every table, sorted, by the name the content script reads it under."""
    return {
        "interactive": sorted(INTERACTIVE_ROLES),
        "focusableStructure": sorted(FOCUSABLE_STRUCTURE),
        "descending": sorted(DESCENDING_ROLES),
        "landmark": sorted(LANDMARK_ROLES),
        "namedOnly": sorted(NAMED_ONLY),
        "structural": sorted(STRUCTURAL_ROLES),
        "nameFromContent": sorted(NAME_FROM_CONTENT),
        "contentNotInNames": sorted(CONTENT_NOT_IN_NAMES),
        "range": sorted(RANGE_ROLES),
    }
