"""The accessibility-tree fallback for `read_page` when the page executor finds an empty tree
(a canvas app, a plugin, a page still loading): a coarse outline of the main frame, with no refs,
rather than an empty answer the model would loop on."""

from __future__ import annotations

from typing import TYPE_CHECKING

from host.browser.l2.ax_tree import SKIPPED_ROLES, TEXT_ROLES, clip, frame_from_nodes, name_of, quote, role_of
from host.cdp.shim import resolvable

if TYPE_CHECKING:
    from host.browser.gateway import BrowserGateway
    from host.tools.call import ToolCall

HEADER = "# Accessibility Tree (CDP fallback)"
MAX_LINES = 400
# Without a name, only these roles are worth a line.
UNNAMED_KEPT = frozenset({"button", "link", "textbox", "checkbox", "heading", "image", "img", "combobox"})
QUIET_ROLES = frozenset({"none", "generic", "RootWebArea", "WebArea", *SKIPPED_ROLES})


async def ax_outline(call: "ToolCall", browser: "BrowserGateway") -> str | None:
    """The outline text, or None when the tree has nothing to show either."""
    from cdp_use.cdp.accessibility.commands import GetFullAXTreeReturns

    from host.browser.l2.session import debugger

    assert call.tab_id is not None
    async with debugger(call.tab_id, browser, write=False) as client:
        answer = await client.send("Accessibility.getFullAXTree", result_type=resolvable(GetFullAXTreeReturns))
    frame = frame_from_nodes("tab", None, "", "", "", answer["nodes"])
    lines = []
    for node in frame.walk():
        role, name = role_of(node), name_of(node)
        if node.get("ignored") or role in QUIET_ROLES or role in TEXT_ROLES:
            continue
        if not name and role not in UNNAMED_KEPT:
            continue
        lines.append(f"- {role} {quote(clip(name, 120))}" if name else f"- {role}")
        if len(lines) >= MAX_LINES:
            break
    if not lines:
        return None
    return "\n".join([HEADER, "(the page executor found no readable content; no refs: use read_page_deep, "
                      "a screenshot or click_xy to act)", "", *lines])
