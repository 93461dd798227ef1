"""Turning a ref into the backend node an L2 action acts on, without guessing.

* A deep ref (`c…`) is checked against the tab's current deep read and epoch, then its identity
  is read again from the page: the frame must still hold the same loader, the document node
  must still exist, and the element must still be connected to that document. Only reads are
  sent while checking.
* An L1 ref (`s…`) must belong to the tab's current snapshot. It is resolved by the page
  executor itself, in its isolated world (the execution context found through `Runtime`
  events), strictly as any L1 action would; the element it returns is described to get its
  `backendNodeId`, and its document element to get the frame it is in (read in that same
  world, where the page cannot redefine `ownerDocument`). Translations are cached per snapshot
  and epoch.

Every failure is `stale_ref` with a reason; the action's writes are then bound to the epoch the
target was resolved under (`Writer`), so a page that changes in between gets none of them.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from host.tools.failure import ToolCode, ToolFailure
from host.browser.l2.deep_refs import StaleReason, is_deep_ref, stale
from host.browser.l2.translations import Translation
from host.cdp.client import TabClient
from host.cdp.errors import CdpCode, CdpError

if TYPE_CHECKING:
    from host.browser.gateway import BrowserGateway
    from host.tools.call import ToolCall

CHECK_GROUP = "tabwarden-check"
L1_GROUP = "tabwarden-l1"


@dataclass(frozen=True)
class NodeTarget:
    """The element an action will act on, and the epoch its identity was proven under."""

    ref: str
    session_id: str | None
    backend_node_id: int
    epoch: int
    kind: str  # "deep" or "l1"
    role: str = ""
    name: str = ""
    input_type: str | None = None
    frame_id: str = ""  # the frame whose document holds the element

    def describe(self) -> str:
        return f'{self.role} "{self.name}"' if self.name else (self.role or "element")


class Writer:
    """Sends the commands that act on the page, each bound to the target's epoch; counts what
    went out, so a failure can say whether the action may have taken effect."""

    def __init__(self, client: TabClient, epoch: int):
        self.client = client
        self.epoch = epoch
        self.sent = 0

    async def __call__(self, method: str, params: dict[str, Any], session_id: str | None = None) -> Any:
        result = await self.client.send(method, params, session_id=session_id, expect_epoch=self.epoch)
        self.sent += 1
        return result

    def begin(self, method: str, params: dict[str, Any], session_id: str | None = None) -> "asyncio.Future[Any]":
        """Send without waiting for the acknowledgement (see TabClient.begin)."""
        future = self.client.begin(method, params, session_id=session_id, expect_epoch=self.epoch)
        self.sent += 1
        return future

    def on(self, session_id: str | None) -> "BoundSender":
        """A sender bound to one session: input for an out-of-process frame goes to its own widget."""
        return BoundSender(self, session_id)


class BoundSender:
    """A Writer's commands for one session (what the input helpers take)."""

    def __init__(self, writer: Writer, session_id: str | None):
        self.writer = writer
        self.session_id = session_id

    async def __call__(self, method: str, params: dict[str, Any]) -> Any:
        return await self.writer(method, params, self.session_id)

    def begin(self, method: str, params: dict[str, Any]) -> "asyncio.Future[Any]":
        return self.writer.begin(method, params, self.session_id)


def cdp_failure(exc: CdpError, *, write: bool, sent: int = 0) -> ToolFailure:
    """A CdpError as the tool failure the model reads."""
    acted = write and (sent > 0 or exc.dispatched and exc.code not in (CdpCode.EPOCH_CHANGED, CdpCode.SESSION_GONE))
    details: dict[str, Any] = {"dispatched": acted or (not write and exc.dispatched), **exc.details}
    if acted:
        details["effectMayHaveOccurred"] = True
    if exc.code == CdpCode.EPOCH_CHANGED:
        details["reason"] = StaleReason.LIFECYCLE_CHANGED
        return ToolFailure(ToolCode.STALE_REF, f"the page changed while the action was prepared ({exc.details.get('reason')}); "
                           "nothing more was sent. Read the page again", phase="dispatch", retryable=True, details=details)
    if exc.code == CdpCode.DETACHED:
        return ToolFailure(ToolCode.DEBUGGER_DETACHED, exc.message, phase="execute", retryable=not acted, details=details)
    if exc.code == CdpCode.SESSION_GONE:
        details["reason"] = StaleReason.INVALIDATED
        return ToolFailure(ToolCode.STALE_REF, exc.message, phase="resolve", retryable=True, details=details)
    if exc.code == CdpCode.DOMAIN_NOT_ALLOWED:
        return ToolFailure(ToolCode.UNSUPPORTED, exc.message, phase="precheck", details={"dispatched": False})
    if exc.code == CdpCode.ATTACH_FAILED:
        return ToolFailure(ToolCode.DEBUGGER_UNAVAILABLE, exc.message, phase="precheck", details={"dispatched": False})
    if exc.code in (CdpCode.TIMEOUT, CdpCode.NOT_CONNECTED, CdpCode.TAB_CLOSED, "overloaded", "cancelled"):
        return ToolFailure(exc.code, exc.message, phase="execute", retryable=not acted, details=details)
    return ToolFailure(ToolCode.CDP_ERROR, exc.message, phase="execute", retryable=False, details=details)


async def _verify_deep(client: TabClient, target: NodeTarget, frame_id: str, loader_id: str, document_id: int) -> None:
    """Read the node's identity again (reads only); raise stale_ref when it changed."""
    session = target.session_id
    ref = target.ref
    try:
        tree = await client.send("Page.getFrameTree", session_id=session)
        frames, stack = {}, [tree["frameTree"]]
        while stack:
            item = stack.pop()
            frames[item["frame"]["id"]] = item["frame"]
            stack.extend(item.get("childFrames") or [])
        frame = frames.get(frame_id)
        if frame is None:
            raise stale(ref, StaleReason.DOCUMENT_CHANGED, "its frame is gone")
        if frame.get("loaderId") != loader_id:
            raise stale(ref, StaleReason.DOCUMENT_CHANGED, "its frame loaded another document")
        try:
            document = await client.send("DOM.resolveNode", {"backendNodeId": document_id, "objectGroup": CHECK_GROUP},
                                         session_id=session)
        except CdpError:
            raise stale(ref, StaleReason.DOCUMENT_CHANGED, "its document no longer exists") from None
        try:
            element = await client.send("DOM.resolveNode", {"backendNodeId": target.backend_node_id,
                                                            "objectGroup": CHECK_GROUP}, session_id=session)
        except CdpError:
            raise stale(ref, StaleReason.INVALIDATED, "its element no longer exists") from None
        same = await client.send("Runtime.callFunctionOn", {
            "objectId": element["object"]["objectId"], "returnByValue": True,
            "functionDeclaration": "function (doc) { return this.isConnected && this.ownerDocument === doc; }",
            "arguments": [{"objectId": document["object"]["objectId"]}]}, session_id=session)
        if (same.get("result") or {}).get("value") is not True:
            raise stale(ref, StaleReason.INVALIDATED, "its element was removed from the page")
    except CdpError as exc:
        if exc.code == CdpCode.SESSION_GONE:
            raise stale(ref, StaleReason.INVALIDATED, "its frame session ended") from None
        raise cdp_failure(exc, write=False) from None
    finally:
        try:
            await client.send("Runtime.releaseObjectGroup", {"objectGroup": CHECK_GROUP}, session_id=session)
        except CdpError:
            pass


async def _main_frame_id(client: TabClient) -> str:
    tree = await client.send("Page.getFrameTree")
    return str(tree["frameTree"]["frame"]["id"])


_OWNER_DOCUMENT_ELEMENT = "function () { return this.ownerDocument && this.ownerDocument.documentElement; }"


async def _translate_l1(call: "ToolCall", browser: "BrowserGateway", client: TabClient, ref: str) -> Translation:
    """The backendNodeId of an L1 ref, resolved by the page executor in its own world, and the
    id of the frame whose document holds it."""
    manager = browser.cdp
    context = await manager.isolated_context(client, await _main_frame_id(client))
    if context is None:
        raise ToolFailure(ToolCode.STALE_REF, f"ref {ref} is stale (the page executor is no longer in this page); call "
                          "read_page again", phase="resolve", retryable=True,
                          details={"reason": StaleReason.DOCUMENT_CHANGED, "dispatched": False, "ref": ref})
    expression = ("(() => { try { return globalThis.__tabwarden.elementForRef(" + json.dumps(ref) + "); } "
                  "catch (e) { return 'stale: ' + String((e && e.message) || e); } })()")
    try:
        answer = await client.send("Runtime.evaluate", {"expression": expression, "contextId": context,
                                                        "objectGroup": L1_GROUP, "returnByValue": False})
        result = answer.get("result") or {}
        if result.get("subtype") != "node" or not result.get("objectId"):
            why = str(result.get("value") or "the page executor did not return an element")
            raise ToolFailure(ToolCode.STALE_REF, why.removeprefix("stale: "), phase="resolve", retryable=True,
                              details={"reason": StaleReason.INVALIDATED, "dispatched": False, "ref": ref})
        described = await client.send("DOM.describeNode", {"objectId": result["objectId"]})
        owner = await client.send("Runtime.callFunctionOn", {"objectId": result["objectId"], "objectGroup": L1_GROUP,
                                                             "functionDeclaration": _OWNER_DOCUMENT_ELEMENT,
                                                             "returnByValue": False})
        root = (owner.get("result") or {}).get("objectId")
        frame_id = ((await client.send("DOM.describeNode", {"objectId": root})).get("node") or {}).get("frameId") \
            if root else None
        if not frame_id:
            raise stale(ref, StaleReason.DOCUMENT_CHANGED, "the document that held it is gone")
        return Translation(int(described["node"]["backendNodeId"]), str(frame_id))
    except CdpError as exc:
        raise cdp_failure(exc, write=False) from None
    finally:
        try:
            await client.send("Runtime.releaseObjectGroup", {"objectGroup": L1_GROUP})
        except CdpError:
            pass


async def translate_l1(call: "ToolCall", browser: "BrowserGateway", client: TabClient, ref: str) -> Translation:
    """The element an L1 ref names now (cached per snapshot and epoch); stale_ref when the ref
    is not from the tab's latest snapshot or the page executor no longer finds it."""
    tab_id = client.tab_id
    hint = browser.refs.lookup(tab_id, ref)
    if hint is None or not browser.refs.is_current(tab_id, ref):
        raise ToolFailure(ToolCode.STALE_REF, f"ref {ref} is not from the latest read_page of this tab; call read_page "
                          "again", phase="resolve", retryable=True,
                          details={"reason": StaleReason.NOT_FOUND, "dispatched": False, "ref": ref})
    snapshot = browser.refs.current_snapshot(tab_id)
    epoch = client.state.epoch
    cache = browser.l1_translations
    found = cache.get(tab_id, epoch, snapshot, ref)
    if found is None:
        found = await _translate_l1(call, browser, client, ref)
        cache.put(tab_id, epoch, snapshot, ref, found)
    return found


async def resolve_target(call: "ToolCall", browser: "BrowserGateway", client: TabClient, ref: str) -> NodeTarget:
    """The node `ref` names in the call's tab, proven current; raises stale_ref otherwise."""
    tab_id = client.tab_id
    state = client.state
    if is_deep_ref(ref):
        node = browser.deep_refs.resolve(tab_id, ref, state.epoch, state.epoch_reason)
        target = NodeTarget(ref, node.session_id, node.backend_node_id, state.epoch, "deep", node.role, node.name,
                            node.input_type, node.frame_id)
        await _verify_deep(client, target, node.frame_id, node.loader_id, node.document_backend_id)
    else:
        epoch = state.epoch
        translated = await translate_l1(call, browser, client, ref)
        hint = browser.refs.lookup(tab_id, ref)
        assert hint is not None  # translate_l1 refuses a ref the host does not know
        target = NodeTarget(ref, None, translated.backend_node_id, epoch, "l1", hint.role, hint.name, hint.input_type,
                            translated.frame_id)
    if state.epoch != target.epoch:
        raise stale(ref, StaleReason.LIFECYCLE_CHANGED, f"the page changed while the action was prepared ({state.epoch_reason})")
    return target
