"""`read_page_deep`: the full accessibility tree of a tab through CDP, frames stitched in.

Frame documents are read as far as the text can show (`ax_prefix`): the top one first, then
those held by the iframes read, level by level: the tab's own frames in its session,
out-of-process iframes (nested ones too) in their flat child sessions, closed shadow roots
included (the tree is built on the flattened DOM). Each iframe node is linked to its content
frame through `DOM.describeNode` (the owner's `frameId`), and each frame carries the
origin actions in it are judged at, which the text names where it is not the tab's. Password
inputs are found with a DOM search, so their values are never shown and the gatekeeper knows
what a fill targets. A frame of a site the thread may not read (the blocked list: no access) is
left out whole, its frames with it, and its iframe line says why (`withheld`).
Nodes the tree does not call interactive are checked for click and key listeners, read once
per document. A ref whose line the budget drops is not kept. The whole read is repeated (up to three times) when the page changes while it is read, so the
refs it mints carry the epoch of the page they describe.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass
from collections.abc import Callable
from typing import Any

from host.browser.l2.ax_prefix import read_frame_tree
from host.browser.l2.ax_tree import (REF_OVERFLOW_CHARS, FrameAX, RefMark, build_lines, fit, frame_from_nodes,
                                     innermost_candidates, is_interactive, role_of, truncation_marker)
from host.browser.l2.deep_refs import DeepGeneration, DeepNode, DeepRefMap
from host.browser.l2.frames import frame_origin
from host.cdp.client import TabClient
from host.cdp.errors import CdpError
from host.cdp.manager import CdpManager
from host.cdp.shim import resolvable

log = logging.getLogger("tabwarden.browser")

MAX_LISTENER_CANDIDATES = 5_000
MAX_FRAMES = 64
MAX_PASSWORD_FIELDS = 200
READ_ATTEMPTS = 3
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


@dataclass
class _Visit:
    """A frame document to read: where it lives and the iframe line it fills."""

    session: str | None
    frame_id: str | None  # None: the session's own top frame
    remote: bool
    link: tuple[str, str] | None = None


async def _collect(client: TabClient, manager: CdpManager, ceiling: int,
                   withheld: Callable[[str], str | None] | None) -> _Frames:
    """Read the tab's frame documents that the text can show: the top one, then, level by level,
    those held by an iframe read so far, unless their site is withheld."""
    ax_type, tree_type = _types()
    frames: dict[str, FrameAX] = {}
    links: dict[tuple[str, str], FrameAX | str] = {}
    infos: dict[str | None, dict[str, dict[str, Any]]] = {}  # session -> frame id -> frame info
    tops: dict[str | None, str] = {}
    origins: dict[str, str] = {}  # frame id -> origin; parents are read before their children
    root: FrameAX | None = None
    wave = [_Visit(None, None, False)]
    while wave and len(frames) < MAX_FRAMES:
        for session in {visit.session for visit in wave if visit.session not in infos}:
            tree = await client.send("Page.getFrameTree", session_id=session, result_type=tree_type)
            flat = _flatten(tree["frameTree"])
            infos[session], tops[session] = {f["id"]: f for f in flat}, flat[0]["id"]
        chosen: list[tuple[_Visit, dict[str, Any], str]] = []
        for visit in wave[MAX_FRAMES - len(frames):]:
            if visit.link:
                links[visit.link] = "not read (frame limit)"
        for visit in wave[: MAX_FRAMES - len(frames)]:
            info = infos[visit.session][visit.frame_id or tops[visit.session]]
            origin = frame_origin(str(info.get("securityOrigin") or ""), str(info.get("url") or ""),
                                  origins.get(str(info.get("parentId") or ""), ""))
            reason = withheld(origin) if withheld is not None and origin and visit.link else None
            if reason and visit.link:
                links[visit.link] = reason  # nothing of it is read, nor of the frames it holds
            else:
                chosen.append((visit, info, origin))
        read = await asyncio.gather(*(read_frame_tree(client, visit.session, info["id"], ceiling=ceiling,
                                                      ax_type=ax_type) for visit, info, _ in chosen))
        wave = []
        for (visit, info, origin), tree in zip(chosen, read):
            frame = frame_from_nodes(_key(visit.session, info["id"]), visit.session, info["id"], info.get("loaderId", ""),
                                     info.get("url", ""), tree.nodes, out_of_process=visit.remote and visit.frame_id is None)
            frame.origin = origins[info["id"]] = origin
            frame.elements, frame.elements_read, frame.complete = tree.elements, tree.elements_read, tree.complete
            frames[frame.key] = frame
            root = root or frame
            if visit.link:
                links[visit.link] = frame
            wave.extend(await _held_frames(client, manager, frame, infos[visit.session], links))
    for visit in wave:
        if visit.link:
            links[visit.link] = "not read (frame limit)"
    assert root is not None
    return _Frames(frames, links, root)


async def _held_frames(client: TabClient, manager: CdpManager, frame: FrameAX, local: dict[str, dict[str, Any]],
                       links: dict[tuple[str, str], FrameAX | str]) -> list[_Visit]:
    """The frame documents held by the iframes read in `frame`, to read next; an iframe whose
    document cannot be reached has its reason in `links`."""
    owners = [node for node in frame.walk()
              if role_of(node) == "Iframe" and node.get("backendDOMNodeId") and not node.get("ignored")]
    described = await asyncio.gather(*(client.send("DOM.describeNode", {"backendNodeId": node["backendDOMNodeId"]},
                                                   session_id=frame.session_id) for node in owners), return_exceptions=True)
    found: list[_Visit] = []
    for node, answer in zip(owners, described):
        link = (frame.key, str(node.get("nodeId")))
        child_frame = answer.get("node", {}).get("frameId") if isinstance(answer, dict) else None
        if not child_frame:
            links[link] = "not reachable"
        elif child_frame in local:
            found.append(_Visit(frame.session_id, child_frame, False, link))
        else:
            child = await manager.wait_for_session(client.tab_id, child_frame, CHILD_WAIT_S)
            if child is None:
                links[link] = "out-of-process frame not reachable"
            else:
                found.append(_Visit(child.session_id, None, True, link))
    return found


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
    """The click and key listeners on the nodes worth asking (the tree does not call them
    interactive and they hold nothing interactive); returns (candidates, hits). Each session's
    top document is asked once for the listeners of every node in it (`depth: -1` with
    `pierce`: shadow roots and the frames of its process included), where asking node by node
    would cost two round trips each."""
    candidates: list[tuple[FrameAX, dict[str, Any]]] = []
    documents: dict[str | None, int] = {}  # session -> its top document (read before its frames)
    for frame in frames:
        documents.setdefault(frame.session_id, frame.document_backend_id)
        own = {backend for key, backend in taken if key == frame.key}
        candidates.extend((frame, node) for node in innermost_candidates(frame, own, MAX_LISTENER_CANDIDATES))

    async def listeners_in(session: str | None) -> dict[int, set[str]]:
        found: dict[int, set[str]] = {}
        try:
            resolved = await client.send("DOM.resolveNode", {"backendNodeId": documents[session], "objectGroup": SCAN_GROUP},
                                         session_id=session)
            answer = await client.send("DOMDebugger.getEventListeners", {"objectId": resolved["object"]["objectId"],
                                                                         "depth": -1, "pierce": True}, session_id=session)
        except (CdpError, KeyError):
            return found  # no listener refs from this document: the tree's refs still stand
        finally:
            with contextlib.suppress(CdpError):
                await client.send("Runtime.releaseObjectGroup", {"objectGroup": SCAN_GROUP}, session_id=session)
        for item in answer.get("listeners") or []:
            if item.get("type") in LISTENER_EVENTS and item.get("backendNodeId"):
                found.setdefault(int(item["backendNodeId"]), set()).add(str(item["type"]))
        return found

    sessions = sorted({frame.session_id for frame, _ in candidates}, key=lambda session: session or "")
    by_session = dict(zip(sessions, await asyncio.gather(*(listeners_in(session) for session in sessions))))
    hits: dict[tuple[str, int], list[str]] = {}
    for frame, node in candidates:
        backend = int(node["backendDOMNodeId"])
        kinds = by_session[frame.session_id].get(backend)
        if kinds:
            hits[(frame.key, backend)] = sorted(kinds)
    return len(candidates), hits


def _unread(collected: _Frames) -> list[str]:
    """A line for each document read only in part (the text was full before its end)."""
    return [f"[{'the page' if frame is collected.root else 'the frame of ' + (frame.origin or frame.url)} has "
            f"{frame.elements} elements: read as far as this text can show ({frame.elements_read}), the rest not read]"
            for frame in collected.frames.values() if not frame.complete]


async def read_deep(client: TabClient, manager: CdpManager, refs: DeepRefMap, *, max_tokens: int = 3000,
                    withheld: Callable[[str], str | None] | None = None) -> DeepRead:
    """Read the tab deeply, mint the refs of a new generation and make it current. `withheld`:
    the reason a frame of this origin may not be read, or None when it may."""
    stable = False
    clock = time.perf_counter
    for _ in range(READ_ATTEMPTS):
        epoch = client.epoch
        started = clock()
        collected = await _collect(client, manager, max(0, max_tokens) * 4 + REF_OVERFLOW_CHARS, withheld)
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
    for ref in rendered.unshown_refs:  # a ref the model never saw is not one it may use
        generation.nodes.pop(ref, None)
    root = collected.root
    header = [f"# Deep Page Snapshot ({generation.prefix[:-1]})", f"URL: {root.url}", f"Title: {root.title[:200]}", ""]
    body = rendered.lines or ["(the accessibility tree has nothing to show)"]
    body.extend(_unread(collected))
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
