"""Trusted input on an image map's `<area>`. An area has no layout box of its own (the browser
answers no content quads for it and refuses to scroll it into view): it shows through the image
that uses its map, where its shape's coords are CSS pixels from the image's border box, times
CSS zoom (an image shown at another size than its file's keeps them).

The image and a point of the shape are found in an isolated world of our own, where the page
cannot redefine what is read: the point is one the browser's own hit test gives to this area
(not to an earlier area of the map over it, nor to anything over the image). The image is
scrolled so that the shape is in view, and `geometry.check_hit` asks the browser once more, at
document coordinates, before the click: there the hit must be the area itself."""

from __future__ import annotations

from typing import Any

from host.browser.l2 import geometry
from host.browser.l2.targets import NodeTarget, Writer
from host.cdp.client import TabClient
from host.cdp.errors import CdpError
from host.tools.failure import ToolCode, ToolFailure

AREA_WORLD = "tabwarden-area"
AREA_GROUP = "tabwarden-area"

# `want`: "image" (the first shown image whose map holds the area), "box" (the shape's bounds
# over it, from its corner, clipped to it) or "point" (a point the hit test gives this area,
# from the image's corner, sampled over those bounds within the viewport, nearest the middle).
# Null when there is none. Runs in our isolated world, with the area as `this`.
_AREA = """function (want) {
  const area = this, map = area.closest("map"), name = map && map.getAttribute("name");
  if (!name) return null;
  const root = map.getRootNode();
  const uses = (img) => {
    const use = img.getAttribute("usemap") || "", at = use.indexOf("#");
    if (at < 0 || use.slice(at + 1) !== name) return false;
    return [...root.querySelectorAll("map")].find((m) => m.getAttribute("name") === name) === map;
  };
  const image = [...root.querySelectorAll("img[usemap]")].find((img) => uses(img) && img.getClientRects().length > 0);
  if (!image) return null;
  if (want === "image") return image;
  const box = image.getBoundingClientRect(), zoom = image.currentCSSZoom || 1;
  const n = (area.getAttribute("coords") || "").split(/[\\s,;]+/).filter(Boolean).map((p) => (parseFloat(p) || 0) * zoom);
  const shape = (area.getAttribute("shape") || "").trim().toLowerCase();
  let e = null;
  if (shape === "default") e = [0, 0, box.width, box.height];
  else if (shape === "circle" || shape === "circ") { if (n.length >= 3 && n[2] > 0) e = [n[0] - n[2], n[1] - n[2], n[0] + n[2], n[1] + n[2]]; }
  else if (shape === "poly" || shape === "polygon") {
    if (n.length >= 6) {
      const xs = n.filter((_, i) => i % 2 === 0 && i + 1 < n.length), ys = n.filter((_, i) => i % 2 === 1);
      e = [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
    }
  } else if (n.length >= 4) e = [Math.min(n[0], n[2]), Math.min(n[1], n[3]), Math.max(n[0], n[2]), Math.max(n[1], n[3])];
  if (!e) return null;
  const left = Math.max(0, e[0]), top = Math.max(0, e[1]), right = Math.min(box.width, e[2]), bottom = Math.min(box.height, e[3]);
  if (right <= left || bottom <= top) return null;
  if (want === "box") return { x: left, y: top, width: right - left, height: bottom - top };
  const win = area.ownerDocument.defaultView, finder = root.elementFromPoint ? root : area.ownerDocument;
  const x0 = Math.max(box.left + left, 0), y0 = Math.max(box.top + top, 0);
  const x1 = Math.min(box.left + right, win.innerWidth), y1 = Math.min(box.top + bottom, win.innerHeight);
  if (x1 <= x0 || y1 <= y0) return null;
  const mx = box.left + (left + right) / 2, my = box.top + (top + bottom) / 2, steps = 15;
  const points = [[(x0 + x1) / 2, (y0 + y1) / 2]];
  for (let i = 0; i < steps; i++) for (let j = 0; j < steps; j++) points.push([x0 + (x1 - x0) * (i + 0.5) / steps, y0 + (y1 - y0) * (j + 0.5) / steps]);
  points.sort((a, b) => (a[0] - mx) ** 2 + (a[1] - my) ** 2 - (b[0] - mx) ** 2 - (b[1] - my) ** 2);
  const hit = points.find(([x, y]) => finder.elementFromPoint(x, y) === area);
  return hit ? { x: hit[0] - box.left, y: hit[1] - box.top, width: right - left, height: bottom - top } : null;
}"""


async def is_area(client: TabClient, target: NodeTarget) -> bool:
    """Whether the target is an `<area>` (a read)."""
    node = (await client.send("DOM.describeNode", {"backendNodeId": target.backend_node_id},
                              session_id=target.session_id)).get("node") or {}
    return str(node.get("localName") or "").lower() == "area"


async def _ask(client: TabClient, session: str | None, area: str, want: str, *, by_value: bool = True) -> Any:
    answer = await client.send("Runtime.callFunctionOn", {"objectId": area, "functionDeclaration": _AREA,
                                                          "arguments": [{"value": want}], "returnByValue": by_value,
                                                          "objectGroup": AREA_GROUP}, session_id=session)
    result = answer.get("result") or {}
    return result.get("value") if by_value else result.get("objectId")


async def aim_area(client: TabClient, writer: Writer, target: NodeTarget) -> geometry.Point:
    """Scroll the area's shape into view and return a point of it the browser gives the area;
    `not_visible` when no shown image uses its map, `occluded` when no point of it is the area's."""
    session = target.session_id
    try:
        world = await client.send("Page.createIsolatedWorld", {"frameId": target.frame_id, "worldName": AREA_WORLD},
                                  session_id=session)
        resolved = await client.send("DOM.resolveNode", {"backendNodeId": target.backend_node_id, "objectGroup": AREA_GROUP,
                                                         "executionContextId": int(world["executionContextId"])},
                                     session_id=session)
        area = resolved["object"]["objectId"]
        box = await _ask(client, session, area, "box")
        image = await _ask(client, session, area, "image", by_value=False) if box else None
        if not box or not image:
            raise ToolFailure(ToolCode.NOT_VISIBLE, f"{target.describe()} is an image map area that shows nowhere: no image "
                              "shown uses its map, or its shape lies outside the image", phase="precheck", retryable=True,
                              details={"dispatched": False})
        described = await client.send("DOM.describeNode", {"objectId": image}, session_id=session)
        image_id = int(described["node"]["backendNodeId"])
        for parent, owner in reversed(await geometry.owner_chain(client, session)):
            await writer("DOM.scrollIntoViewIfNeeded", {"backendNodeId": owner}, parent)
        await writer("DOM.scrollIntoViewIfNeeded", {"backendNodeId": image_id, "rect": box}, session)
        at = await _ask(client, session, area, "point")
        if not at:
            raise ToolFailure(ToolCode.OCCLUDED, f"no point of {target.describe()} (an image map area) reaches it: an earlier "
                              "area of its map or something over the image covers its shape; scroll, close the overlay, "
                              "or read the page again", phase="precheck", retryable=True, details={"dispatched": False})
        border = (await client.send("DOM.getBoxModel", {"backendNodeId": image_id}, session_id=session))["model"]["border"]
    finally:
        try:
            await client.send("Runtime.releaseObjectGroup", {"objectGroup": AREA_GROUP}, session_id=session)
        except CdpError:
            pass
    local_x, local_y = border[0] + float(at["x"]), border[1] + float(at["y"])
    dx, dy = await geometry.frame_offset(client, await geometry.owner_chain(client, session))
    return geometry.Point(local_x + dx, local_y + dy, local_x, local_y, float(at["width"]), float(at["height"]))
