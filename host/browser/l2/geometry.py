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


async def document_point(client: TabClient, session_id: str | None, x: float, y: float) -> tuple[float, float]:
    """A point of the session's viewport (where input and content quads are) in its document's
    coordinates, which DOM.getNodeForLocation takes: it takes the scroll off again itself, so a
    viewport point given as is would test another place on any scrolled page."""
    metrics = await client.send("Page.getLayoutMetrics", session_id=session_id)
    # The top document's visual viewport is where input lands; a frame of its own process has none.
    view = metrics.get("cssVisualViewport" if session_id is None else "cssLayoutViewport") or {}
    return x + float(view.get("pageX") or 0), y + float(view.get("pageY") or 0)


async def check_hit(client: TabClient, session_id: str | None, backend_node_id: int, point: Point,
                    frame_id: str = "") -> None:
    """Raise `occluded` when a click at `point` would land on something outside the element
    (shadow trees are crossed: a click on a closed shadow root's button is a hit), in particular
    on another frame's document. A hit test that cannot run refuses the click: the click would
    go wherever the page puts something there, which may be another origin's frame."""
    described: dict[str, Any] = {}
    try:
        at_x, at_y = await document_point(client, session_id, point.local_x, point.local_y)
        hit = await client.send("DOM.getNodeForLocation", {"x": round(at_x), "y": round(at_y),
                                                           "includeUserAgentShadowDOM": True,
                                                           "ignorePointerEventsNone": False}, session_id=session_id)
        hit_id = int(hit["backendNodeId"])
        if hit_id == backend_node_id:
            return
        other_frame = bool(frame_id) and hit.get("frameId") != frame_id
        if not other_frame:
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
    except CdpError as exc:
        raise ToolFailure(ToolCode.OCCLUDED, f"what is at ({point.x:.0f}, {point.y:.0f}) could not be checked "
                          f"({exc.cdp_message or exc.message}), so nothing was clicked; scroll or read the page again",
                          phase="precheck", retryable=True, details={"dispatched": False}) from None
    finally:
        try:
            await client.send("Runtime.releaseObjectGroup", {"objectGroup": HIT_GROUP}, session_id=session_id)
        except CdpError:
            pass
    raise ToolFailure(ToolCode.OCCLUDED, f"another element ({_describe(described.get('node') or {})}) covers the target at "
                      f"({point.x:.0f}, {point.y:.0f}); scroll, close the overlay, or read the page again",
                      phase="precheck", retryable=True, details={"dispatched": False})


@dataclass(frozen=True)
class Hit:
    """Where input at a top-level point goes: the session whose widget receives it, the point in
    that widget's viewport, and the frame whose document is under it."""

    session_id: str | None
    x: float
    y: float
    frame_id: str


FRAME_OWNERS = frozenset({"iframe", "frame", "object", "embed", "fencedframe"})


async def hit_point(client: TabClient, x: float, y: float, max_depth: int = 8) -> Hit:
    """Hit-test top-level (x, y) the way the browser will route input there (reads only).

    The browser does not pass debugger input on into out-of-process frames, so a point over one
    is followed into the frame's own session, in the frame's own coordinates. In-process frames
    need no following: the hit test itself returns the node inside them, with its frame. Raises
    CdpError when a level cannot be read and ToolFailure when the point cannot be followed, so
    that input never goes where the test could not look."""
    session: str | None = None
    for _ in range(max_depth):
        try:
            at_x, at_y = await document_point(client, session, x, y)
            hit = await client.send("DOM.getNodeForLocation", {"x": round(at_x), "y": round(at_y),
                                                               "ignorePointerEventsNone": False}, session_id=session)
        except CdpError as exc:
            if exc.cdp_message and "No node found" in exc.cdp_message:
                raise ToolFailure(ToolCode.INVALID_PARAMS, f"nothing is at ({x:g}, {y:g}) in the page; take a screenshot "
                                  "to find the point again", phase="validate", details={"dispatched": False}) from None
            raise
        frame_id = hit.get("frameId")
        if not frame_id:
            raise ToolFailure(ToolCode.UNSUPPORTED_FRAME, f"the browser did not say which frame is at ({x:g}, {y:g})",
                              phase="precheck", details={"dispatched": False})
        owner = int(hit["backendNodeId"])
        node = (await client.send("DOM.describeNode", {"backendNodeId": owner}, session_id=session)).get("node") or {}
        inner = node.get("frameId") if str(node.get("localName") or "").lower() in FRAME_OWNERS else None
        child = next((c for c in client.state.sessions.values() if c.target_id == inner and c.parent == session), None) \
            if inner and inner != frame_id else None
        if child is None:
            if inner and inner != frame_id and not await _frame_is_local(client, session, inner):
                raise ToolFailure(ToolCode.UNSUPPORTED_FRAME, f"({x:g}, {y:g}) is over a frame the debugger is not "
                                  "attached to (yet); read the page again", phase="precheck", retryable=True,
                                  details={"dispatched": False})
            return Hit(session, x, y, str(frame_id))  # the owner itself (its border) or an in-process frame's node
        content = (await client.send("DOM.getBoxModel", {"backendNodeId": owner}, session_id=session))["model"]["content"]
        left, top, right, bottom = min(content[0::2]), min(content[1::2]), max(content[0::2]), max(content[1::2])
        if not (left <= x < right and top <= y < bottom):
            return Hit(session, x, y, str(frame_id))  # on the iframe's border or padding: the parent's
        x, y, session = x - content[0], y - content[1], child.session_id
    raise ToolFailure(ToolCode.UNSUPPORTED_FRAME, f"({x:g}, {y:g}) is inside frames nested more than {max_depth} deep",
                      phase="precheck", details={"dispatched": False})


async def _frame_is_local(client: TabClient, session: str | None, frame_id: str) -> bool:
    tree = await client.send("Page.getFrameTree", session_id=session)
    stack = [tree.get("frameTree") or {}]
    while stack:
        item = stack.pop()
        if (item.get("frame") or {}).get("id") == frame_id:
            return True
        stack.extend(item.get("childFrames") or [])
    return False


def _describe(node: dict[str, Any]) -> str:
    name = str(node.get("localName") or node.get("nodeName") or "node").lower()
    attrs = node.get("attributes") or []
    pairs = dict(zip(attrs[0::2], attrs[1::2]))
    if pairs.get("id"):
        name += f"#{pairs['id']}"
    classes = str(pairs.get("class") or "").split()[:2]
    return name + "".join(f".{c}" for c in classes)
