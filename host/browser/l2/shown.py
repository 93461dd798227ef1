"""The last check of an L2 action on a ref, right before its first input: the element must still
have the role and accessible name the host knows it by (the hint of the read its ref came from,
which is what the gatekeeper judged and the approval card showed). Identity alone is not enough:
a page can keep the approved button and rename it "Delete account" with a new handler. Such a
page gets `target_changed` and no input.

The element is read again the way its ref was made: a deep ref's node from the accessibility
tree, an L1 ref's element by the page executor in its isolated world (where the page's scripts
cannot reach). Only reads are sent.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from host.browser.l2.ax_tree import name_of, role_of
from host.browser.l2.deep_refs import StaleReason
from host.browser.l2.targets import NodeTarget, cdp_failure
from host.cdp.client import TabClient
from host.cdp.errors import CdpError
from host.tools.failure import ToolCode, ToolFailure

if TYPE_CHECKING:
    from host.browser.gateway import BrowserGateway

# The role a deep read gives an element it found by its event listeners: not the page's, so
# only its name is compared.
LISTENER_ROLE = "clickable"
NAME_MAX = 200  # as the deep read and the ref map keep names


async def confirm_shown(browser: "BrowserGateway", client: TabClient, target: NodeTarget) -> None:
    """Raise `target_changed` (nothing dispatched) unless `target` still has the role and name
    it was read with; `stale_ref` when it can no longer be read at all."""
    if target.kind == "deep":
        role, name = await _deep_now(client, target)
    else:
        role, name = await _l1_now(browser, client, target)
    if (target.role == LISTENER_ROLE or role == target.role) and name == target.name:
        return
    was, now = _shown(target.role, target.name), _shown(role, name)
    raise ToolFailure(ToolCode.TARGET_CHANGED, f"ref {target.ref} changed since the page was read: it was {was}, it is "
                      f"now {now}; nothing was sent. Read the page again and decide anew", phase="precheck",
                      details={"dispatched": False, "ref": target.ref, "expected": {"role": target.role, "name": target.name},
                               "found": {"role": role, "name": name}})


def _shown(role: str, name: str) -> str:
    return f"{role} {json.dumps(name, ensure_ascii=False)}" if name else role


async def _deep_now(client: TabClient, target: NodeTarget) -> tuple[str, str]:
    try:
        answer = await client.send("Accessibility.getPartialAXTree", {"backendNodeId": target.backend_node_id,
                                                                      "fetchRelatives": False}, session_id=target.session_id)
    except CdpError as exc:
        raise cdp_failure(exc, write=False) from None
    node: dict[str, Any] | None = next((n for n in answer.get("nodes") or ()
                                        if n.get("backendDOMNodeId") == target.backend_node_id), None)
    if node is None:
        raise _stale(target, "its element is no longer in the accessibility tree")
    return role_of(node), name_of(node)[:NAME_MAX]


async def _l1_now(browser: "BrowserGateway", client: TabClient, target: NodeTarget) -> tuple[str, str]:
    try:
        tree = await client.send("Page.getFrameTree")
        context = await browser.cdp.isolated_context(client, str(tree["frameTree"]["frame"]["id"]))
        if context is None:
            raise _stale(target, "the page executor is no longer in this page")
        expression = ("(() => { try { const TW = globalThis.__tabwarden; return TW.roleAndName(TW.elementForRef("
                      + json.dumps(target.ref) + ")); } catch (e) { return { stale: String((e && e.message) || e) }; } })()")
        answer = await client.send("Runtime.evaluate", {"expression": expression, "contextId": context,
                                                        "returnByValue": True})
    except CdpError as exc:
        raise cdp_failure(exc, write=False) from None
    value = (answer.get("result") or {}).get("value")
    if isinstance(value, dict) and isinstance(value.get("role"), str) and isinstance(value.get("name"), str):
        return value["role"], value["name"]
    if isinstance(value, dict) and isinstance(value.get("stale"), str):
        raise _stale(target, message=value["stale"])  # the executor's own words, naming the ref
    raise _stale(target, "the page executor did not describe the element")


def _stale(target: NodeTarget, why: str = "", *, message: str = "") -> ToolFailure:
    return ToolFailure(ToolCode.STALE_REF, message or f"ref {target.ref} is stale ({why}); read the page again",
                       phase="precheck", retryable=True,
                       details={"reason": StaleReason.INVALIDATED, "dispatched": False, "ref": target.ref})
