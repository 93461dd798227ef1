"""The accessibility tree of one frame document, read no further than a deep read can show.

`Accessibility.getFullAXTree` costs the browser about as much per node as it returns, and on a
big page the budget cuts most of what it returns. A document of more than `FULL_BELOW` elements
is therefore read in document order, in pieces:

    our isolated world splits the document      Runtime.evaluate -> [meta, document, el, el, ...]
      (subtrees of at most CHUNK elements;      Runtime.getProperties, DOM.describeNode each
       bigger ones are descended into)            -> backend node ids
    each piece's subtree                        Accessibility.queryAXTree
    each element descended through              Accessibility.getPartialAXTree (the node alone)
    joined under the document's root, in order  -> one node list, as getFullAXTree gives

A shadow host, a custom element (its shadow root may be closed) and elements whose tree the
browser builds itself (select, details, media, frames) are never descended into: only the
browser knows their flattened tree, so they are read whole. The split stops once its pieces
hold about as many likely refs (links, controls, focusable elements) as the ceiling the text is
cut to can show; when the tree finds fewer, another wave asks for as many more as are missing.
Smaller documents, documents whose pieces would cover most of them anyway, and documents not
shown (the browser answers a piece only once the page draws a frame) are read whole.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from dataclasses import dataclass
from typing import Any

from host.browser.l2.ax_tree import is_interactive
from host.browser.l2.probe_world import evaluate_in_probe_world
from host.cdp.client import TabClient
from host.cdp.errors import CdpCode, CdpError

FULL_BELOW = 2_000
CHUNK = 200
WHOLE_SHARE = 0.7  # pieces covering this share of the document: one whole read instead
MAX_GROWTH = 4
# A piece is read once the page has drawn its next frame; this long without one, the
# document is read whole instead.
PIECE_TIMEOUT_S = 2.0
# How many levels of elements the tree leaves out are looked through for what they show.
UNWRAP_DEPTH = 3
# What one ref line costs the text, on average: role, name, states and the ref.
REF_LINE_CHARS = 40
PREFIX_GROUP = "tabwarden-prefix"
_groups = itertools.count(1)  # one object group per split: frames of a session are split side by side
TRIM = "ax_nodes"  # the bridge leaves out what the text never shows

# (want, chunk, fullBelow, wholeShare) -> [meta JSON, document, node, ...]: pieces in document
# order until they hold about `want` elements that will likely have refs (links, controls,
# focusable ones, shadow hosts). meta.kinds[i] and meta.parents[i] describe node i+1 ("r" the
# document, "d" descended through, "c" read whole). meta.full: read the document whole instead.
_SPLIT = r"""((want, chunk, fullBelow, wholeShare) => {
  const top = document.documentElement;
  const count = (el) => el.getElementsByTagName("*").length + 1;
  const total = top ? count(top) : 0;
  // The browser answers a piece only once the page has drawn a frame: a hidden one draws none.
  if (total <= fullBelow || document.visibilityState !== "visible") return [JSON.stringify({total, full: true})];
  const SKIP = new Set(["HEAD", "SCRIPT", "STYLE", "TEMPLATE", "NOSCRIPT", "LINK", "META"]);
  const WHOLE = new Set(["IFRAME", "FRAME", "OBJECT", "EMBED", "SELECT", "DETAILS", "VIDEO", "AUDIO", "svg", "math",
                         "FIELDSET", "TEXTAREA", "INPUT"]);
  const LIKELY = "a[href],button,input:not([type=hidden]),select,textarea,summary,[tabindex],[contenteditable]";
  const hosts = (el) => (el.shadowRoot || el.localName.includes("-") ? 1 : 0);
  const likely = (el) => el.querySelectorAll(LIKELY).length + (el.matches(LIKELY) ? 1 : hosts(el));
  const items = [document], kinds = ["r"], parents = [-1];
  let left = want, read = 0, complete = true;
  const add = (node, kind, parent, size, refs) => { items.push(node); kinds.push(kind); parents.push(parent);
                                                     read += size; left -= refs; return items.length - 1; };
  const visit = (el, parent) => {
    if (SKIP.has(el.tagName)) return;
    const size = count(el);
    if (size <= chunk || hosts(el) || WHOLE.has(el.tagName)) {
      add(el, "c", parent, size, likely(el));
      return;
    }
    const me = add(el, "d", parent, 1, el.matches(LIKELY) ? 1 : 0);
    for (let child = el.firstChild; child; child = child.nextSibling) {
      if (left <= 0) { complete = false; return; }
      if (child.nodeType === 1) visit(child, me);
      else if (child.nodeType === 3 && child.data.trim()) add(child, "c", me, 0, 0);
    }
  };
  visit(top, 0);
  // Most of the document anyway: one whole read costs the browser less than its pieces.
  if (read >= total * wholeShare) return [JSON.stringify({total, full: true})];
  return [JSON.stringify({total, full: false, complete, read, kinds, parents}), ...items];
})"""


@dataclass
class FrameTree:
    """The node list of one frame document, and how much of it was read."""

    nodes: list[dict[str, Any]]
    elements: int = 0  # the document's elements (0: not counted)
    elements_read: int = 0
    complete: bool = True


async def read_frame_tree(client: TabClient, session: str | None, frame_id: str, *, ceiling: int,
                          ax_type: Any = Any) -> FrameTree:
    """The frame document's accessibility nodes: all of them for a document of up to
    `FULL_BELOW` elements, a hidden one, or one that cannot be read in pieces; else a prefix in
    document order whose refs would fill `ceiling` characters of text."""
    pieces: dict[tuple[str, int], list[dict[str, Any]]] = {}
    want = ceiling / REF_LINE_CHARS * 1.1
    while True:
        split = await _split(client, session, frame_id, int(want) + 1)
        if split is None or not await _read_pieces(client, session, split[0]["kinds"], split[1], pieces):
            full = await client.send("Accessibility.getFullAXTree", {"frameId": frame_id}, session_id=session,
                                     result_type=ax_type, trim=TRIM)
            return FrameTree(list(full["nodes"]))
        meta, backends = split
        nodes = _join(meta["kinds"], meta["parents"], backends, pieces)
        read, total = int(meta["read"]), int(meta["total"])
        refs = sum(1 for node in nodes if is_interactive(node))
        if meta["complete"] or read >= total or refs * REF_LINE_CHARS >= ceiling:
            return FrameTree(nodes, total, read, bool(meta["complete"]))
        # Fewer refs than the page's markup promised: ask for as many more as are missing.
        want *= min(max(ceiling / (max(refs, 1) * REF_LINE_CHARS) * 1.2, 1.5), MAX_GROWTH)


async def _split(client: TabClient, session: str | None, frame_id: str, want: int
                 ) -> tuple[dict[str, Any], list[int]] | None:
    """The document's pieces (meta, backend node id of each), or None to read it whole."""
    expression = f"({_SPLIT})({want}, {CHUNK}, {FULL_BELOW}, {WHOLE_SHARE})"
    group = f"{PREFIX_GROUP}-{next(_groups)}"
    try:
        answer = await evaluate_in_probe_world(client, session, frame_id, {
            "expression": expression, "objectGroup": group, "returnByValue": False})
        array = (answer.get("result") or {}).get("objectId")
        if answer.get("exceptionDetails") or not array:
            return None
        listing = await client.send("Runtime.getProperties", {"objectId": array, "ownProperties": True},
                                    session_id=session)
        values = {int(p["name"]): p.get("value") or {} for p in listing.get("result", []) if str(p.get("name")).isdigit()}
        meta = json.loads(str(values.get(0, {}).get("value") or "{}"))
        if meta.get("full", True):
            return None
        handles = [values.get(i, {}).get("objectId") for i in range(1, len(meta["kinds"]) + 1)]
        if not all(handles):
            return None
        described = await asyncio.gather(*(client.send("DOM.describeNode", {"objectId": handle}, session_id=session)
                                           for handle in handles))
        return meta, [int(d["node"]["backendNodeId"]) for d in described]
    except (CdpError, KeyError, ValueError, TypeError):
        return None  # read whole: slower, never wrong
    finally:
        try:
            client.begin("Runtime.releaseObjectGroup", {"objectGroup": group}, session_id=session) \
                .add_done_callback(lambda done: done.cancelled() or done.exception())
        except CdpError:
            pass


async def _read_pieces(client: TabClient, session: str | None, kinds: list[str], backends: list[int],
                       pieces: dict[tuple[str, int], list[dict[str, Any]]]) -> bool:
    """Fill `pieces` with the nodes of each piece not read in an earlier wave; False when the
    browser did not answer in time."""
    todo = [(kind, backend) for kind, backend in zip(kinds, backends) if (kind, backend) not in pieces]

    async def read(kind: str, backend: int) -> list[dict[str, Any]]:
        if kind == "c":
            return await _subtree(client, session, backend, UNWRAP_DEPTH)
        answer = await _asked(client, session, "Accessibility.getPartialAXTree",
                              {"backendNodeId": backend, "fetchRelatives": False})
        return list(answer.get("nodes") or [])

    try:
        found = await asyncio.gather(*(read(*key) for key in todo))
    except CdpError as exc:
        if exc.code == CdpCode.TIMEOUT:
            return False
        raise
    pieces.update(zip(todo, found))
    return True


async def _subtree(client: TabClient, session: str | None, backend: int, unwrap: int) -> list[dict[str, Any]]:
    """The nodes of a DOM node's subtree. An element the tree leaves out (a custom element with
    no role of its own, `display: contents`) has no subtree to query: what it shows is read
    through its shadow root's children (closed ones too: the debugger sees them), or else its
    own children. Raises CdpError(timeout); a node the tree has nothing for gives []."""
    nodes = list((await _asked(client, session, "Accessibility.queryAXTree", {"backendNodeId": backend})).get("nodes") or [])
    if nodes or unwrap <= 0:
        return nodes
    described = (await _asked(client, session, "DOM.describeNode",
                              {"backendNodeId": backend, "depth": 1, "pierce": True})).get("node") or {}
    roots = described.get("shadowRoots") or []
    # Never a shadow root itself: asking the tree about one ends the debugger session.
    kids = [kid for root in roots for kid in root.get("children") or []] if roots else described.get("children") or []
    out: list[dict[str, Any]] = []
    for kid in kids:
        if kid.get("nodeType") in (1, 3) and kid.get("backendNodeId"):
            out.extend(await _subtree(client, session, int(kid["backendNodeId"]), unwrap - 1))
    return out


async def _asked(client: TabClient, session: str | None, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """One piece's command: {} when the browser has nothing for the node (a text node the tree
    folds away, a node gone since it was found); raises CdpError(timeout) when it does not answer."""
    try:
        return await client.send(method, params, session_id=session, timeout=PIECE_TIMEOUT_S,
                                 trim=TRIM if method.startswith("Accessibility.") else None)
    except CdpError as exc:
        if exc.code == CdpCode.TIMEOUT:
            raise
        return {}


def _join(kinds: list[str], parents: list[int], backends: list[int],
          pieces: dict[tuple[str, int], list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """One node list: each piece's top nodes become children of the element it was found
    under, in document order; an element descended through with no node of its own is passed
    through as an ignored one."""
    nodes: list[dict[str, Any]] = []
    heads: list[list[str]] = []
    skeleton: dict[int, dict[str, Any]] = {}
    for index, (kind, backend) in enumerate(zip(kinds, backends)):
        found = pieces.get((kind, backend), [])
        if kind == "c":
            nodes.extend(found)
            present = {str(node.get("nodeId")) for node in found}
            heads.append([str(node.get("nodeId")) for node in found if str(node.get("parentId")) not in present])
            continue
        own = next((node for node in found if node.get("backendDOMNodeId") == backend), None)
        node = dict(own) if own else {"nodeId": f"tw-{backend}", "ignored": True, "role": {"value": "none"},
                                      "backendDOMNodeId": backend}
        if kind == "r":
            node.pop("parentId", None)
        node["childIds"] = []
        skeleton[index] = node
        nodes.append(node)
        heads.append([str(node["nodeId"])])
    for index, parent in enumerate(parents):
        if parent >= 0 and parent in skeleton and index != parent:
            skeleton[parent]["childIds"].extend(heads[index])
    return nodes
