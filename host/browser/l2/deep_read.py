"""`read_page_deep`: the full accessibility tree of a tab through CDP, frames stitched in.

Every frame document is read with `Accessibility.getFullAXTree`: the tab's own frames in its
session, out-of-process iframes (nested ones too) in their flat child sessions, closed shadow
roots included (the tree is built on the flattened DOM). Each iframe node is linked to its
content frame through `DOM.describeNode` (the owner's `frameId`), and each frame carries the
origin actions in it are judged at, which the text names where it is not the tab's. Password
inputs are found with a DOM search, so their values are never shown and the gatekeeper knows
what a fill targets. A frame of a site the thread may not read (the blocked list: no access) is
left out whole, its frames with it, and its iframe line says why (`withheld`).
Nodes the tree does not call interactive are asked for event listeners, at most 120 of them.
The whole read is repeated (up to three times) when the page changes while it is read, so the
refs it mints carry the epoch of the page they describe.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from collections.abc import Callable
from typing import Any

from host.browser.l2.ax_tree import (FrameAX, RefMark, build_lines, fit, frame_from_nodes, innermost_candidates,
                                     is_interactive, role_of, truncation_marker)
from host.browser.l2.deep_refs import DeepGeneration, DeepNode, DeepRefMap
from host.browser.l2.frames import frame_origin
from host.cdp.client import TabClient
from host.cdp.errors import CdpError
from host.cdp.manager import CdpManager
from host.cdp.shim import resolvable

log = logging.getLogger("tabwarden.browser")

MAX_LISTENER_CANDIDATES = 120
MAX_FRAMES = 64
MAX_PASSWORD_FIELDS = 200
READ_ATTEMPTS = 3
SCAN_CONCURRENCY = 16
CHILD_WAIT_S = 3.0
LISTENER_EVENTS = frozenset({"click", "mousedown", "mouseup", "pointerdown", "pointerup", "keydown", "touchstart"})
SCAN_GROUP = "tabwarden-scan"


def _types() -> tuple[Any, Any]:
    from cdp_use.cdp.accessibility.commands import GetFullAXTreeReturns
    from cdp_use.cdp.page.commands import GetFrameTreeReturns

    return resolvable(GetFullAXTreeReturns), resolvable(GetFrameTreeReturns)


@dataclass
class DeepRead:
    """One finished deep read."""

    text: str
    generation: DeepGeneration
    frames: int
    out_of_process_frames: int
    unreachable_frames: int
    scanned: int
    listener_refs: int
    dropped_lines: int
    stable: bool


@dataclass
class _Frames:
    frames: dict[str, FrameAX]
    links: dict[tuple[str, str], FrameAX | str]  # (frame key, iframe AX node id) -> content
    root: FrameAX


def _key(session_id: str | None, frame_id: str) -> str:
    return f"{session_id or 'tab'}/{frame_id}"


def _flatten(tree: dict[str, Any]) -> list[dict[str, Any]]:
    out, stack = [], [tree]
    while stack:
        item = stack.pop()
        out.append(item["frame"])
        stack.extend(reversed(item.get("childFrames") or []))
    return out


async def _collect(client: TabClient, manager: CdpManager) -> _Frames:
    """Read every reachable frame document of the tab."""
    ax_type, tree_type = _types()
    frames: dict[str, FrameAX] = {}
    links: dict[tuple[str, str], FrameAX | str] = {}
    pending: list[tuple[tuple[str, str], str, str]] = []  # (link, child session, child frame id)
    queue: list[tuple[str | None, bool]] = [(None, False)]
    root: FrameAX | None = None
    origins: dict[str, str] = {}  # frame id -> origin; parents are read before their children
    while queue and len(frames) < MAX_FRAMES:
        session, remote = queue.pop(0)
        tree = await client.send("Page.getFrameTree", session_id=session, result_type=tree_type)
        local = _flatten(tree["frameTree"])[: MAX_FRAMES - len(frames)]
        local_ids = {f["id"] for f in local}
        trees = await asyncio.gather(*(client.send("Accessibility.getFullAXTree", {"frameId": f["id"]}, session_id=session,
                                                   result_type=ax_type) for f in local))
        owners: list[tuple[FrameAX, dict[str, Any]]] = []
        for index, (info, ax) in enumerate(zip(local, trees)):
            frame = frame_from_nodes(_key(session, info["id"]), session, info["id"], info.get("loaderId", ""),
                                     info.get("url", ""), ax["nodes"], out_of_process=remote and index == 0)
            frame.origin = origins[info["id"]] = frame_origin(str(info.get("securityOrigin") or ""), frame.url,
                                                              origins.get(str(info.get("parentId") or ""), ""))
            frames[frame.key] = frame
            if root is None:
                root = frame
            owners.extend((frame, node) for node in frame.walk()
                          if role_of(node) == "Iframe" and node.get("backendDOMNodeId") and not node.get("ignored"))
        described = await asyncio.gather(*(client.send("DOM.describeNode", {"backendNodeId": node["backendDOMNodeId"]},
                                                       session_id=session) for _, node in owners), return_exceptions=True)
        for (frame, node), answer in zip(owners, described):
            link = (frame.key, str(node.get("nodeId")))
            child_frame = answer.get("node", {}).get("frameId") if isinstance(answer, dict) else None
            if not child_frame:
                links[link] = "not reachable"
            elif child_frame in local_ids:
                pending.append((link, session or "", child_frame))
            else:
                child = await manager.wait_for_session(client.tab_id, child_frame, CHILD_WAIT_S)
                if child is None:
                    links[link] = "out-of-process frame not reachable"
                else:
                    queue.append((child.session_id, True))
                    pending.append((link, child.session_id, child_frame))
    for link, session, frame_id in pending:
        links[link] = frames.get(_key(session or None, frame_id)) or "not read (frame limit)"
    assert root is not None
    return _Frames(frames, links, root)


async def _password_fields(client: TabClient, sessions: set[str | None]) -> set[tuple[str | None, int]]:
    """(session, backend node id) of every password input, shadow roots and frames included."""
    found: set[tuple[str | None, int]] = set()
    for session in sessions:
        try:
            await client.send("DOM.getDocument", {"depth": 0}, session_id=session)
            search = await client.send("DOM.performSearch", {"query": "input[type=password]"}, session_id=session)
            count = min(int(search.get("resultCount", 0)), MAX_PASSWORD_FIELDS)
            if count:
                hits = await client.send("DOM.getSearchResults", {"searchId": search["searchId"], "fromIndex": 0,
                                                                  "toIndex": count}, session_id=session)
                described = await asyncio.gather(*(client.send("DOM.describeNode", {"nodeId": node_id}, session_id=session)
                                                   for node_id in hits.get("nodeIds", [])), return_exceptions=True)
                for answer in described:
                    if isinstance(answer, dict) and answer.get("node", {}).get("backendNodeId"):
                        found.add((session, int(answer["node"]["backendNodeId"])))
            await client.send("DOM.discardSearchResults", {"searchId": search["searchId"]}, session_id=session)
        except CdpError as exc:
            log.info("password search in tab %d failed: %s", client.tab_id, exc)
    return found


async def _scan_listeners(client: TabClient, frames: list[FrameAX], taken: set[tuple[str, int]]
                          ) -> tuple[int, dict[tuple[str, int], list[str]]]:
    """Ask at most 120 non-interactive nodes for click/key listeners; returns (scanned, hits)."""
    candidates: list[tuple[FrameAX, dict[str, Any]]] = []
    for frame in frames:
        room = MAX_LISTENER_CANDIDATES - len(candidates)
        if room <= 0:
            break
        own = {backend for key, backend in taken if key == frame.key}
        candidates.extend((frame, node) for node in innermost_candidates(frame, own, room))
    gate = asyncio.Semaphore(SCAN_CONCURRENCY)
    hits: dict[tuple[str, int], list[str]] = {}

    async def probe(frame: FrameAX, node: dict[str, Any]) -> None:
        backend = int(node["backendDOMNodeId"])
        async with gate:
            try:
                resolved = await client.send("DOM.resolveNode", {"backendNodeId": backend, "objectGroup": SCAN_GROUP},
                                             session_id=frame.session_id)
                object_id = resolved.get("object", {}).get("objectId")
                if not object_id:
                    return
                answer = await client.send("DOMDebugger.getEventListeners", {"objectId": object_id, "depth": 0},
                                           session_id=frame.session_id)
            except CdpError:
                return
        kinds = sorted({str(item.get("type")) for item in answer.get("listeners", [])} & LISTENER_EVENTS)
        if kinds:
            hits[(frame.key, backend)] = kinds

    await asyncio.gather(*(probe(frame, node) for frame, node in candidates))
    for session in {frame.session_id for frame, _ in candidates}:
        try:
            await client.send("Runtime.releaseObjectGroup", {"objectGroup": SCAN_GROUP}, session_id=session)
        except CdpError:
            pass
    return len(candidates), hits


def _withhold(collected: _Frames, withheld: Callable[[str], str | None]) -> _Frames:
    """`collected` without the frames whose origin `withheld` names a reason for (and every frame
    under them): their iframe lines say the reason instead, and nothing of them is scanned."""
    links = dict(collected.links)
    kept: dict[str, FrameAX] = {}
    todo = [collected.root]
    while todo:
        frame = todo.pop()
        kept[frame.key] = frame
        for node in frame.walk():
            link = (frame.key, str(node.get("nodeId")))
            child = links.get(link)
            if not isinstance(child, FrameAX) or child.key in kept:
                continue
            reason = withheld(child.origin) if child.origin else None
            if reason:
                links[link] = reason
            else:
                todo.append(child)
    return _Frames({key: frame for key, frame in collected.frames.items() if key in kept}, links, collected.root)


async def read_deep(client: TabClient, manager: CdpManager, refs: DeepRefMap, *, max_tokens: int = 3000,
                    withheld: Callable[[str], str | None] | None = None) -> DeepRead:
    """Read the tab deeply, mint the refs of a new generation and make it current. `withheld`:
    the reason a frame of this origin may not be read, or None when it may."""
    stable = False
    clock = time.perf_counter
    for _ in range(READ_ATTEMPTS):
        epoch = client.epoch
        started = clock()
        collected = await _collect(client, manager)
        if withheld is not None:
            collected = _withhold(collected, withheld)
        order = list(collected.frames.values())
        collected_at = clock()
        interactive = {(frame.key, int(node["backendDOMNodeId"])) for frame in order for node in frame.walk()
                       if is_interactive(node)}
        # The password search and the listener scan ask different things of the same documents:
        # side by side, the read waits for the longer of the two only.
        passwords, (scanned, listeners) = await asyncio.gather(
            _password_fields(client, {frame.session_id for frame in order}), _scan_listeners(client, order, interactive))
        log.info("deep read of tab %d: frames %.0f ms, password search and listener scan %.0f ms",
                 client.tab_id, (collected_at - started) * 1000, (clock() - collected_at) * 1000)
        if client.epoch == epoch:
            stable = True
            break
    generation = refs.begin(client.tab_id, epoch)
    counter = 0

    def ref_for(frame: FrameAX, node: dict[str, Any]) -> RefMark | None:
        nonlocal counter
        backend = int(node.get("backendDOMNodeId") or 0)
        kinds = listeners.get((frame.key, backend))
        if not backend or not (kinds or is_interactive(node)):
            return None
        counter += 1
        ref = f"{generation.prefix}{counter}"
        input_type = "password" if (frame.session_id, backend) in passwords else None
        role = "clickable" if kinds else role_of(node)
        generation.nodes[ref] = DeepNode(
            ref=ref, backend_node_id=backend, session_id=frame.session_id, frame_id=frame.frame_id,
            loader_id=frame.loader_id, document_backend_id=frame.document_backend_id, role=role,
            name=" ".join(str((node.get("name") or {}).get("value") or "").split())[:200], input_type=input_type,
            source="listener" if kinds else "ax")
        extra = tuple(f"listener={kind}" for kind in kinds or ())
        return RefMark(ref, role, input_type, extra)

    def frame_for(frame: FrameAX, node: dict[str, Any]) -> FrameAX | str | None:
        return collected.links.get((frame.key, str(node.get("nodeId"))))

    lines = build_lines(collected.root, ref_for, frame_for, MAX_FRAMES)
    rendered = fit(lines, max(0, max_tokens) * 4)
    root = collected.root
    header = [f"# Deep Page Snapshot ({generation.prefix[:-1]})", f"URL: {root.url}", f"Title: {root.title[:200]}", ""]
    body = rendered.lines or ["(the accessibility tree has nothing to show)"]
    marker = truncation_marker(rendered)
    if not stable:
        body.append("[the page kept changing while it was read; these refs may already be stale]")
    text = "\n".join(header + body) + (f"\n{marker}" if marker else "")
    refs.commit(client.tab_id, generation)
    unreachable = sum(1 for value in collected.links.values() if isinstance(value, str))
    return DeepRead(text=text, generation=generation, frames=len(collected.frames),
                    out_of_process_frames=sum(1 for f in collected.frames.values() if f.session_id is not None),
                    unreachable_frames=unreachable, scanned=scanned, listener_refs=sum(1 for n in generation.nodes.values()
                                                                                   if n.source == "listener"),
                    dropped_lines=rendered.dropped, stable=stable)
