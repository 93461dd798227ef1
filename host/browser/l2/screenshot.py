"""Screenshots: the viewport, the full page, or one element (a ref's box), optionally with
labels drawn over the current refs. A full-page shot overrides the device metrics and a labelled
one adds an overlay; both are undone in `finally`, whatever happens in between. The image is
written under the data folder and named in the result (the model gets its description)."""

from __future__ import annotations

import base64
import json
import math
import secrets
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TYPE_CHECKING

from host.tools.failure import ToolCode, ToolFailure
from host.browser.l2 import geometry
from host.browser.l2.deep_refs import is_deep_ref
from host.browser.l2.targets import NodeTarget, resolve_target
from host.cdp.client import TabClient
from host.cdp.errors import CdpError

if TYPE_CHECKING:
    from host.browser.gateway import BrowserGateway

MAX_FULL_PAGE_HEIGHT = 8_192  # a 16k-pixel capture ended the chrome.debugger session here (Chromium 156)
MAX_LABELS = 60
OVERLAY_WORLD = "tabwarden-annotate"

_DRAW = """(boxes) => {
  const host = document.createElement("div");
  host.setAttribute("data-tabwarden-annotations", "");
  host.style.cssText = "position:fixed;inset:0;pointer-events:none;z-index:2147483647";
  for (const b of boxes) {
    const box = document.createElement("div");
    box.style.cssText = `position:fixed;left:${b.x}px;top:${b.y}px;width:${b.w}px;height:${b.h}px;` +
      "outline:2px solid #e0245e;box-sizing:border-box";
    const tag = document.createElement("span");
    tag.textContent = b.label;
    tag.style.cssText = "position:absolute;left:0;top:-14px;font:11px monospace;background:#e0245e;color:#fff;padding:0 2px";
    box.appendChild(tag);
    host.appendChild(box);
  }
  (document.body || document.documentElement).appendChild(host);
  return true;
}"""
_CLEAR = "document.querySelectorAll('[data-tabwarden-annotations]').forEach((n) => n.remove())"


@dataclass
class Shot:
    data: bytes
    mime: str
    width: int
    height: int
    labels: list[str]
    target: str


def _png_size(data: bytes) -> tuple[int, int]:
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24:
        return struct.unpack(">II", data[16:24])
    return 0, 0


def save(shot: Shot, folder: Path) -> tuple[str, Path]:
    """Write the image privately; returns (attachment id, path)."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    shot_id = f"shot-{secrets.token_hex(8)}"
    path = folder / f"{shot_id}.{'png' if shot.mime == 'image/png' else 'jpg'}"
    with open(path, "xb") as handle:
        path.chmod(0o600)
        handle.write(shot.data)
    return shot_id, path


async def _label_boxes(call: Any, browser: "BrowserGateway", client: TabClient) -> list[dict[str, Any]]:
    """Boxes (top-level viewport) of the current refs: the deep read's if current, else L1's."""
    tab_id = client.tab_id
    boxes: list[dict[str, Any]] = []
    generation = browser.deep_refs.current(tab_id)
    if generation is not None and generation.tab_epoch == client.epoch:
        targets = [(node.ref, node.session_id, node.backend_node_id) for node in list(generation.nodes.values())[:MAX_LABELS]]
    else:
        targets = []
        for hint in browser.refs.hints(tab_id)[:MAX_LABELS]:
            try:
                found: NodeTarget = await resolve_target(call, browser, client, hint.ref)
            except Exception:
                continue
            targets.append((hint.ref, None, found.backend_node_id))
    for ref, session, backend in targets:
        try:
            point = await geometry.locate(client, session, backend)
        except Exception:
            continue
        boxes.append({"x": point.x - point.width / 2, "y": point.y - point.height / 2, "w": point.width,
                      "h": point.height, "label": ref})
    return boxes


async def _overlay(client: TabClient, boxes: list[dict[str, Any]]) -> int | None:
    """Draw the labels from an isolated world of our own; returns its context (None: not drawn)."""
    tree = await client.send("Page.getFrameTree")
    world = await client.send("Page.createIsolatedWorld", {"frameId": tree["frameTree"]["frame"]["id"],
                                                           "worldName": OVERLAY_WORLD})
    context = int(world["executionContextId"])
    await client.send("Runtime.evaluate", {"expression": f"({_DRAW})({json.dumps(boxes)})", "contextId": context})
    return context


async def capture(call: Any, browser: "BrowserGateway", client: TabClient, *, target: str, image_format: str, quality: int | None,
                  annotate: bool) -> Shot:
    """Take the screenshot the call asks for."""
    params: dict[str, Any] = {"format": image_format}
    if image_format == "jpeg" and quality is not None:
        params["quality"] = quality
    labels: list[str] = []
    context = None
    overridden = False
    width = height = 0
    # A tab nobody looks at draws no frames, and a capture waits for one: a (tiny, sparse)
    # screencast keeps the page drawing while the screenshot is taken.
    await client.send("Page.startScreencast", {"format": "jpeg", "quality": 1, "maxWidth": 32, "maxHeight": 32,
                                               "everyNthFrame": 1000})
    try:
        if target not in ("viewport", "fullpage"):
            node = await resolve_target(call, browser, client, target)
            await client.send("DOM.scrollIntoViewIfNeeded", {"backendNodeId": node.backend_node_id},
                              session_id=node.session_id, expect_epoch=node.epoch)
            point = await geometry.locate(client, node.session_id, node.backend_node_id)
            metrics = await client.send("Page.getLayoutMetrics")
            view = metrics["cssVisualViewport"]
            width, height = max(1, math.ceil(point.width)), max(1, math.ceil(point.height))
            params["clip"] = {"x": view["pageX"] + point.x - point.width / 2, "y": view["pageY"] + point.y - point.height / 2,
                              "width": width, "height": height, "scale": 1}
        if annotate:
            boxes = await _label_boxes(call, browser, client)
            labels = [box["label"] for box in boxes]
            if boxes:
                context = await _overlay(client, boxes)
        if target == "fullpage":
            metrics = await client.send("Page.getLayoutMetrics")
            size = metrics["cssContentSize"]
            width, height = math.ceil(size["width"]), min(math.ceil(size["height"]), MAX_FULL_PAGE_HEIGHT)
            overridden = True
            # The viewport becomes the page; captureBeyondViewport gives empty or odd images here.
            await client.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": height,
                                                                     "deviceScaleFactor": 1, "mobile": False})
        answer = await client.send("Page.captureScreenshot", params, timeout=60)
    finally:
        try:
            await client.send("Page.stopScreencast")
        except CdpError:
            pass
        if overridden:
            try:
                await client.send("Emulation.clearDeviceMetricsOverride")
            except CdpError:
                pass
        if context is not None:
            try:
                await client.send("Runtime.evaluate", {"expression": _CLEAR, "contextId": context})
            except CdpError:
                pass
    data = base64.b64decode(answer.get("data") or "")
    if not data:
        raise ToolFailure(ToolCode.CDP_ERROR, "the browser returned an empty image; try the viewport or a smaller element",
                          phase="execute", details={"dispatched": True})
    if image_format == "png":
        width, height = _png_size(data)
    elif not width:
        metrics = await client.send("Page.getLayoutMetrics")
        width, height = math.ceil(metrics["cssVisualViewport"]["clientWidth"]), math.ceil(metrics["cssVisualViewport"]["clientHeight"])
    shown = target if target in ("viewport", "fullpage") else ("deep ref " if is_deep_ref(target) else "ref ") + target
    return Shot(data, "image/png" if image_format == "png" else "image/jpeg", width, height, labels, shown)
