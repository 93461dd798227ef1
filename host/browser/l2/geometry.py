"""Where an element is on screen, in the top-level viewport's CSS pixels, and whether a click
there would reach it.

`DOM.getContentQuads` answers relative to the viewport of the node's process-local root: the
top-level page for the tab's own frames, the iframe itself for an out-of-process frame. For
the latter the offsets of the owner iframes (their content boxes, read in the parent session)
are added, level by level, up to the tab.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from host.tools.failure import ToolCode, ToolFailure
from host.cdp.client import TabClient
from host.cdp.errors import CdpError

HIT_GROUP = "tabwarden-hit"


@dataclass(frozen=True)
class Point:
    x: float  # top-level viewport
    y: float
    local_x: float  # in the node's own session viewport
    local_y: float
    width: float
    height: float


def _area(quad: list[float]) -> float:
    xs, ys = quad[0::2], quad[1::2]
    return abs(sum(xs[i] * ys[(i + 1) % 4] - xs[(i + 1) % 4] * ys[i] for i in range(4))) / 2


async def owner_chain(client: TabClient, session_id: str | None) -> list[tuple[str | None, int]]:
    """(parent session, owner iframe backend id) for each out-of-process level, innermost first."""
    chain = []
    sessions = client.state.sessions
    current = session_id
    while current is not None:
        child = sessions.get(current)
        if child is None:
            raise ToolFailure(ToolCode.STALE_REF, "the element's frame is gone", phase="resolve", retryable=True,
                              details={"reason": "document_identity_changed", "dispatched": False})
        owner = await client.send("DOM.getFrameOwner", {"frameId": child.target_id}, session_id=child.parent)
        chain.append((child.parent, int(owner["backendNodeId"])))
        current = child.parent
    return chain


async def frame_offset(client: TabClient, chain: list[tuple[str | None, int]]) -> tuple[float, float]:
    """The sum of the owner iframes' content-box origins."""
    x = y = 0.0
    for session, owner in chain:
        model = await client.send("DOM.getBoxModel", {"backendNodeId": owner}, session_id=session)
        content = model["model"]["content"]
        x += content[0]
        y += content[1]
    return x, y


async def locate(client: TabClient, session_id: str | None, backend_node_id: int) -> Point:
    """The centre of the node's largest visible quad; `not_visible` when it has none."""
    try:
        answer = await client.send("DOM.getContentQuads", {"backendNodeId": backend_node_id}, session_id=session_id)
    except CdpError as exc:
        raise ToolFailure(ToolCode.NOT_VISIBLE, f"the element has no box on screen ({exc.cdp_message or exc.message})",
                          phase="precheck", retryable=True, details={"dispatched": False}) from None
    quads = [q for q in answer.get("quads") or [] if len(q) == 8 and _area(q) >= 1]
    if not quads:
        raise ToolFailure(ToolCode.NOT_VISIBLE, "the element has no visible area", phase="precheck", retryable=True,
                          details={"dispatched": False})
    quad = max(quads, key=_area)
    local_x, local_y = sum(quad[0::2]) / 4, sum(quad[1::2]) / 4
    dx, dy = await frame_offset(client, await owner_chain(client, session_id))
    return Point(local_x + dx, local_y + dy, local_x, local_y, max(quad[0::2]) - min(quad[0::2]),
                 max(quad[1::2]) - min(quad[1::2]))


async def check_hit(client: TabClient, session_id: str | None, backend_node_id: int, point: Point) -> None:
    """Raise `occluded` when a click at `point` would land on something outside the element
    (shadow trees are crossed: a click on a closed shadow root's button is a hit)."""
    try:
        hit = await client.send("DOM.getNodeForLocation", {"x": round(point.local_x), "y": round(point.local_y),
                                                           "includeUserAgentShadowDOM": True,
                                                           "ignorePointerEventsNone": False}, session_id=session_id)
        hit_id = int(hit["backendNodeId"])
        if hit_id == backend_node_id:
            return
        target = await client.send("DOM.resolveNode", {"backendNodeId": backend_node_id, "objectGroup": HIT_GROUP},
                                   session_id=session_id)
        blocker = await client.send("DOM.resolveNode", {"backendNodeId": hit_id, "objectGroup": HIT_GROUP},
                                    session_id=session_id)
        inside = await client.send("Runtime.callFunctionOn", {
            "objectId": target["object"]["objectId"], "returnByValue": True,
            "functionDeclaration": "function (hit) { for (let n = hit; n; n = n.parentNode || n.host) "
                                   "{ if (n === this) return true; } return false; }",
            "arguments": [{"objectId": blocker["object"]["objectId"]}]}, session_id=session_id)
        if (inside.get("result") or {}).get("value") is True:
            return
        described = await client.send("DOM.describeNode", {"backendNodeId": hit_id}, session_id=session_id)
    except CdpError:
        return  # the hit test is a safety net, not a gate: if it cannot run, the click still aims at the box
    finally:
        try:
            await client.send("Runtime.releaseObjectGroup", {"objectGroup": HIT_GROUP}, session_id=session_id)
        except CdpError:
            pass
    raise ToolFailure(ToolCode.OCCLUDED, f"another element ({_describe(described.get('node') or {})}) covers the target at "
                      f"({point.x:.0f}, {point.y:.0f}); scroll, close the overlay, or read the page again",
                      phase="precheck", retryable=True, details={"dispatched": False})


async def route_point(client: TabClient, x: float, y: float, max_depth: int = 8) -> tuple[str | None, float, float]:
    """The session whose widget receives input at top-level (x, y), and the point in its own
    viewport: the browser does not pass debugger input on into out-of-process frames, so input
    over one is sent to the frame itself."""
    session: str | None = None
    for _ in range(max_depth):
        try:
            hit = await client.send("DOM.getNodeForLocation", {"x": round(x), "y": round(y), "ignorePointerEventsNone": False},
                                    session_id=session)
            owner = int(hit["backendNodeId"])
            node = (await client.send("DOM.describeNode", {"backendNodeId": owner}, session_id=session)).get("node") or {}
        except CdpError:
            return session, x, y
        frame_id = node.get("frameId") if node.get("localName") in ("iframe", "frame") else None
        child = next((c for c in client.state.sessions.values() if c.target_id == frame_id and c.parent == session), None)
        if child is None:
            return session, x, y
        content = (await client.send("DOM.getBoxModel", {"backendNodeId": owner}, session_id=session))["model"]["content"]
        x, y, session = x - content[0], y - content[1], child.session_id
    return session, x, y


def _describe(node: dict[str, Any]) -> str:
    name = str(node.get("localName") or node.get("nodeName") or "node").lower()
    attrs = node.get("attributes") or []
    pairs = dict(zip(attrs[0::2], attrs[1::2]))
    if pairs.get("id"):
        name += f"#{pairs['id']}"
    classes = str(pairs.get("class") or "").split()[:2]
    return name + "".join(f".{c}" for c in classes)
