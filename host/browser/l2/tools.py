"""The L2 tools: read_page_deep, screenshot, click_trusted, type_trusted, press_key, click_xy,
drag, upload_file. Each holds the debugger for its tab, resolves its ref (proving it current),
binds every write to the epoch the target was proven under, tracks the network around trusted
input, and reports what it did like the L1 writes do (child tab adopted, navigation noticed).

The writes act only in the frame they were judged at (`l2/landing.py`): the element's frame
must be the one resolved, the frame under a point and the frame holding the focus are checked
again just before the input is sent."""

from __future__ import annotations

import asyncio
import base64
import contextlib
from typing import Any, AsyncIterator, Awaitable, Callable, TYPE_CHECKING

from host.browser import page_writes
from host.tools.call import ToolCall
from host.tools.failure import ToolCode, ToolFailure
from host.browser.l2 import geometry, image_map, input as trusted
from host.browser.l2.deep_read import read_deep
from host.browser.l2.keys import parse_combo
from host.browser.l2.landing import Landing, check_node, confirm_focus, confirm_points, landing_of, writer_epoch
from host.browser.l2.after_input import TRUSTED_NOTE, report_input
from host.browser.l2.network_idle import NetworkIdle
from host.browser.l2.one_trip import press_in_one_trip
from host.browser.l2.screenshot import capture, save
from host.browser.l2.session import Action, debugger
from host.browser.l2.shown import confirm_shown
from host.browser.l2.targets import NodeTarget, Writer, cdp_failure, resolve_target
from host.gatekeeper.facts.credential_target import names_credential
from host.tools.browser_params import (ClickTrustedParams, ClickXYParams, DragParams, PressKeyParams, ReadPageDeepParams,
                                 ScreenshotParams, TypeTrustedParams, UploadFileParams)
from host.tools.result import ToolResult, success
from host.cdp.client import TabClient
from host.cdp.errors import CdpCode, CdpError

if TYPE_CHECKING:
    from host.browser.gateway import BrowserGateway



async def _focus_for_keys(writer: Writer, target: Any) -> None:
    """Give `target` the focus before keys; an element that cannot take it is refused before any
    key is sent (the browser's refusal changed nothing)."""
    try:
        await writer("DOM.focus", {"backendNodeId": target.backend_node_id}, target.session_id)
    except CdpError as exc:
        if "not focusable" not in exc.cdp_message.lower():
            raise
        raise ToolFailure(ToolCode.NOT_FOCUSABLE, f"{target.describe()} cannot take the keyboard focus, so no key was "
                          "sent; click it, or press keys without a ref on what holds the focus", phase="precheck",
                          details={"dispatched": False}) from exc


async def _scroll_into_view(client: TabClient, writer: Writer, target: NodeTarget) -> None:
    """Bring the element (and, for out-of-process frames, each owner iframe) into view."""
    for session, owner in reversed(await geometry.owner_chain(client, target.session_id)):
        await writer("DOM.scrollIntoViewIfNeeded", {"backendNodeId": owner}, session)
    await writer("DOM.scrollIntoViewIfNeeded", {"backendNodeId": target.backend_node_id}, target.session_id)


async def _aim(client: TabClient, writer: Writer, target: NodeTarget) -> geometry.Point:
    if await image_map.is_area(client, target):  # no box of its own: aimed at over its image
        point = await image_map.aim_area(client, writer, target)
    else:
        await _scroll_into_view(client, writer, target)
        point = await geometry.locate(client, target.session_id, target.backend_node_id)
    await geometry.check_hit(client, target.session_id, target.backend_node_id, point, target.frame_id)
    return point


async def _sent_before(writer: Writer, check: Awaitable[None]) -> None:
    """Run a check after some of the input was sent: a refusal then says it may have acted."""
    try:
        await check
    except ToolFailure as problem:
        if writer.sent:
            problem.details.update(dispatched=True, effectMayHaveOccurred=True)
            problem.message += " (what was sent before the check may have had an effect)"
        raise


@contextlib.asynccontextmanager
async def _cancelled_at_exit(tasks: list["asyncio.Future[Any]"]) -> AsyncIterator[None]:
    """Tasks started beside the network setup are never left running (a setup that failed or
    was cancelled does not wait for them)."""
    try:
        yield
    finally:
        for task in tasks:
            task.cancel()


async def _track_contexts(browser: "BrowserGateway", client: TabClient, landing: Landing) -> None:
    """Let the session of the frame the input lands in report our world's context there (to
    read the focus after the input); a session that cannot is simply not read."""
    try:
        await browser.cdp.track_contexts(client, landing.session_id)
    except CdpError:
        pass


async def _act(call: ToolCall, browser: "BrowserGateway", client: TabClient, writer: Writer, perform: Callable[[Writer], Awaitable[Any]],
               text: str, details: dict[str, Any], session: str | None = None,
               check: Awaitable[None] | None = None) -> ToolResult:
    """Run the input with network tracking (it lands in the frame of `session`; None: the
    tab's own), wait for what it set off, then report: settled or not, new tab, navigation.
    `check`: the last look before the input (it runs beside the network setup, and its
    refusal ends the call before anything more is sent)."""
    tab_id = call.tab_id
    assert tab_id is not None and call.target is not None
    landing = landing_of(call)
    setup = [asyncio.ensure_future(page_writes.tab_ids(call, browser)),  # beside the network setup
             asyncio.ensure_future(_track_contexts(browser, client, landing))]
    if check is not None:
        setup.append(asyncio.ensure_future(check))
    interrupted = None
    async with _cancelled_at_exit(setup), NetworkIdle(client) as network:
        done = await asyncio.gather(*setup, return_exceptions=True)
        for outcome in (*done[2:], done[0]):  # the check's refusal first
            if isinstance(outcome, BaseException):
                raise outcome
        before_tabs = done[0]
        try:
            await perform(writer)
        except CdpError as exc:
            if exc.code != CdpCode.EPOCH_CHANGED or not writer.sent:
                raise cdp_failure(exc, write=True, sent=writer.sent) from None
            interrupted = str(exc.details.get("reason") or "the page changed")  # the action's own effect
        # In our world of the frame the input landed in, when the debugger knows it: the same
        # round trip then tells where the focus is now.
        context = client.state.contexts.get((landing.session_id, landing.frame_id)) if landing.frame_id else None
        settled = await network.wait(landing.session_id if context is not None else session, context=context)
    return await report_input(call, browser, client, writer, landing, settled, interrupted, before_tabs, text, details)


# ---------------------------------------------------------------- reads


async def _read_retrying(call: ToolCall, browser: "BrowserGateway", read: Callable[[TabClient], Awaitable[Any]]) -> Any:
    """Run a read under the debugger; when the session ends under it for any reason but the
    user's cancel (a renderer that stopped answering, for one), attach again and read once more."""
    try:
        async with debugger(call.tab_id, browser, write=False) as client:
            return await read(client)
    except ToolFailure as exc:
        if exc.code != ToolCode.DEBUGGER_DETACHED or exc.details.get("reason") == "canceled_by_user":
            raise
        call.details["retriedAfterDetach"] = exc.details.get("reason") or exc.message
    async with debugger(call.tab_id, browser, write=False) as client:
        return await read(client)


async def read_page_deep(call: ToolCall, browser: "BrowserGateway") -> ToolResult:
    """The accessibility tree across frames and shadow roots, with deep refs."""
    params = call.params
    assert isinstance(params, ReadPageDeepParams) and call.tab_id is not None
    withheld = _withheld_frames(browser, call.thread_id)
    read = await _read_retrying(call, browser, lambda client: read_deep(client, browser.cdp, browser.deep_refs,
                                                                max_tokens=params.max_tokens, withheld=withheld))
    browser.routes.touch(call.thread_id, call.tab_id, wrote=False)
    details = {**call.details, "generation": read.generation.prefix[:-1], "refCount": len(read.generation.nodes),
               "frames": read.frames, "outOfProcessFrames": read.out_of_process_frames,
               "unreachableFrames": read.unreachable_frames, "listenerCandidates": read.scanned,
               "listenerRefs": read.listener_refs, "truncatedLines": read.dropped_lines, "stable": read.stable}
    return success(call.tool, read.text, tab_id=call.tab_id, details=details)


def _withheld_frames(browser: "BrowserGateway", thread_id: str) -> Any:
    """Why a frame of an origin may not be read by this thread (the blocked list: no access, as
    for the tab itself), or None; judged by the gatekeeper, failing closed."""
    gatekeeper = getattr(getattr(browser, "guard", None), "gatekeeper", None)
    if gatekeeper is None:
        return None

    def reason(origin: str) -> str | None:
        try:
            decision = gatekeeper.destination_denied(thread_id, "read_page", origin)
        except Exception:
            return "withheld: whether this site may be read cannot be judged now"
        if decision is not None and decision.code == "sensitive_origin":
            return "withheld: this site is on the blocked list (no access)"
        return None

    return reason


async def screenshot(call: ToolCall, browser: "BrowserGateway") -> ToolResult:
    """A PNG or JPEG of the viewport, the full page or one element, saved as an attachment."""
    from host.paths import dirs

    params = call.params
    assert isinstance(params, ScreenshotParams) and call.tab_id is not None
    shot = await _read_retrying(call, browser, lambda client: capture(call, browser, client, target=params.target, image_format=params.format,
                                                             quality=params.quality, annotate=params.annotate))
    shot_id, path = save(shot, dirs().data / "screenshots")
    browser.routes.touch(call.thread_id, call.tab_id, wrote=False)
    text = f"Screenshot of the {shot.target} saved as {shot_id} ({shot.mime}, {shot.width}x{shot.height} px)."
    if shot.labels:
        text += f" Labelled refs: {', '.join(shot.labels)}."
    details = {**call.details, "attachmentId": shot_id, "path": str(path), "mime": shot.mime, "bytes": len(shot.data),
               "width": shot.width, "height": shot.height, "labels": shot.labels, "provenance": "page", "trust": "untrusted"}
    return success(call.tool, text, tab_id=call.tab_id, details=details)


# ---------------------------------------------------------------- trusted writes


async def click_trusted(call: ToolCall, browser: "BrowserGateway") -> ToolResult:
    """Click an element (L1 or deep ref) with trusted mouse input at its centre."""
    params = call.params
    assert isinstance(params, ClickTrustedParams) and call.tab_id is not None
    landing = landing_of(call)
    action = Action()
    async with debugger(call.tab_id, browser, action, write=True) as client:
        target = await resolve_target(call, browser, client, params.ref)
        check_node(landing, target)
        writer = action.writer = Writer(client, target.epoch)
        point = await _aim(client, writer, target)
        kind = "Double-clicked" if params.double_click else "Clicked"

        async def perform(send: Writer) -> None:
            await confirm_shown(browser, client, target)  # the last step before the input
            await trusted.click(send.on(target.session_id), point.local_x, point.local_y, button=params.button,
                                double=params.double_click)

        return await _act(call, browser, client, writer, perform,
                          f"{kind} {target.describe()} at ({point.x:.0f}, {point.y:.0f}) with {TRUSTED_NOTE}.",
                          {"point": {"x": point.x, "y": point.y}, "targetKind": target.kind}, target.session_id)


_SELECT_FOR_REPLACE = """function () {
  if (typeof this.select === "function" && "value" in this) { this.select(); return "value"; }
  const range = this.ownerDocument.createRange(); range.selectNodeContents(this);
  const sel = this.ownerDocument.defaultView.getSelection(); sel.removeAllRanges(); sel.addRange(range); return "content";
}"""
_CARET_TO_END = """function () {
  if (typeof this.setSelectionRange === "function" && "value" in this) {
    const end = String(this.value).length; try { this.setSelectionRange(end, end); } catch (e) {} return "value";
  }
  const range = this.ownerDocument.createRange(); range.selectNodeContents(this); range.collapse(false);
  const sel = this.ownerDocument.defaultView.getSelection(); sel.removeAllRanges(); sel.addRange(range); return "content";
}"""
_READ_VALUE = "function () { return 'value' in this ? String(this.value) : String(this.textContent || ''); }"


async def _call_on(writer: Writer, target: NodeTarget, function: str) -> Any:
    resolved = await writer("DOM.resolveNode", {"backendNodeId": target.backend_node_id, "objectGroup": "tabwarden-type"},
                            target.session_id)
    answer = await writer("Runtime.callFunctionOn", {"objectId": resolved["object"]["objectId"], "returnByValue": True,
                                                     "functionDeclaration": function}, target.session_id)
    return (answer.get("result") or {}).get("value")


async def type_trusted(call: ToolCall, browser: "BrowserGateway") -> ToolResult:
    """Click into a field and type with trusted key events; verify the value it ends with."""
    params = call.params
    assert isinstance(params, TypeTrustedParams) and call.tab_id is not None
    landing = landing_of(call)
    action = Action()
    async with debugger(call.tab_id, browser, action, write=True) as client:
        target = await resolve_target(call, browser, client, params.ref)
        check_node(landing, target)
        writer = action.writer = Writer(client, target.epoch)
        point = await _aim(client, writer, target)
        before = await _call_on(Writer(client, target.epoch), target, _READ_VALUE)  # a read: not counted
        # What is typed into a credential field is never repeated back, a password input or not.
        hidden = target.input_type == "password" or names_credential(target.name)
        strategy: list[str] = []

        async def perform(send: Writer) -> None:
            await confirm_shown(browser, client, target)  # the last step before the input
            frame = send.on(target.session_id)  # the element's own frame widget gets the input
            await trusted.click(frame, point.local_x, point.local_y)
            await send("DOM.focus", {"backendNodeId": target.backend_node_id}, target.session_id)
            await _call_on(send, target, _SELECT_FOR_REPLACE if params.mode == "replace" else _CARET_TO_END)
            # Keys go to whichever frame holds the focus: the page could have moved it on focus.
            await _sent_before(send, confirm_focus(client, landing, target.frame_id))
            if params.mode == "replace" and not params.text:
                await trusted.press(frame, parse_combo("Backspace"))
            strategy.append(await trusted.type_text(frame, params.text))
            if params.submit:
                await trusted.press(frame, parse_combo("Enter"))

        shown = f"{len(params.text)} characters (hidden)" if hidden else repr(params.text[:200])
        result = await _act(call, browser, client, writer, perform, f"Typed {shown} into {target.describe()} with {TRUSTED_NOTE}.",
                            {"targetKind": target.kind, "typing": strategy}, target.session_id)
        expected = params.text if params.mode == "replace" else f"{before or ''}{params.text}"
        if params.submit or client.epoch != writer.epoch:
            return result
        try:
            now = await client.send("DOM.resolveNode", {"backendNodeId": target.backend_node_id}, session_id=target.session_id)
            read = await client.send("Runtime.callFunctionOn", {"objectId": now["object"]["objectId"], "returnByValue": True,
                                                                "functionDeclaration": _READ_VALUE}, session_id=target.session_id)
            value = (read.get("result") or {}).get("value")
        except CdpError:
            return result
        evidence = result.details["evidence"]
        if value == expected:
            evidence.update(effectState="verified", outcome="verified")
        else:
            evidence["observedEffects"].append("value_differs")
            note = "the field holds different text now" + ("" if hidden else f": {str(value)[:200]!r}")
            result.text += f"\n[{note}]"
        return result


# Keys that act on what they press, which a repeat would act on again and again.
ONCE_ONLY_KEYS = frozenset({"Enter", " "})


async def press_key(call: ToolCall, browser: "BrowserGateway") -> ToolResult:
    """Press a key combination with trusted key events (the focused element, or `ref` focused
    first). Where the debugger could not attach when the call was resolved, it falls back to
    the page executor's synthetic events and says so."""
    params = call.params
    assert isinstance(params, PressKeyParams) and call.tab_id is not None
    combo = parse_combo(params.key)
    if params.repeat > 1 and combo.key is not None and combo.key.key in ONCE_ONLY_KEYS:
        raise ToolFailure(ToolCode.INVALID_PARAMS, f"{combo.describe()} acts on what it presses (it submits, it toggles): "
                          "press it once per call, looking at the page in between", phase="validate",
                          details={"dispatched": False})
    landing = landing_of(call)
    if landing.kind == "synthetic":
        result = await page_writes.run_write(call, browser)  # the page executor says so in its text
        result.details["fallback"] = "synthetic"
        return result
    action = Action()
    async with debugger(call.tab_id, browser, action, write=True) as client:
        if params.ref:
            target = await resolve_target(call, browser, client, params.ref)
            check_node(landing, target)
            writer = action.writer = Writer(client, target.epoch)
            await _scroll_into_view(client, writer, target)
            await confirm_shown(browser, client, target)  # before the focus, which the page may act on
            await _focus_for_keys(writer, target)
            check = _sent_before(writer, confirm_focus(client, landing, target.frame_id))
            session = target.session_id
            if params.repeat > 1:
                return await _press_repeatedly(call, browser, client, writer, combo, session, target.frame_id,
                                               target.describe(), check)
            return await _act(call, browser, client, writer, lambda send: trusted.press(send.on(session), combo),
                              f"Pressed {combo.describe()} on {target.describe()} with {TRUSTED_NOTE}.",
                              {"key": combo.describe()}, session, check=check)
        writer = action.writer = Writer(client, writer_epoch(client, landing))
        text, details = f"Pressed {combo.describe()} on the focused element with {TRUSTED_NOTE}.", {"key": combo.describe()}
        if params.repeat > 1:
            return await _press_repeatedly(call, browser, client, writer, combo, None, None, "the focused element",
                                           confirm_focus(client, landing))
        quick = await press_in_one_trip(call, browser, client, writer, combo, text, details)
        if quick is not None:
            return quick
        return await _act(call, browser, client, writer, lambda send: trusted.press(send.on(None), combo), text, details,
                          check=confirm_focus(client, landing))


async def _press_repeatedly(call: ToolCall, browser: "BrowserGateway", client: TabClient, writer: Writer, combo: Any,
                            session: str | None, frame_id: str | None, where: str, check: Awaitable[None]) -> ToolResult:
    """Press `combo` `repeat` times (sent on `session`), the first after `check`, each other
    after a look that the focus is still in the frame judged (`frame_id`, else the landing's: a
    page may move it into another origin's frame at any key); the presses stop, and the answer
    says so, at the first look that finds it gone."""
    params = call.params
    assert isinstance(params, PressKeyParams)
    landing = landing_of(call)
    done = [0]
    stopped: list[str] = []

    async def presses(send: Writer) -> None:
        for index in range(params.repeat):
            if index:
                try:
                    await confirm_focus(client, landing, frame_id)
                except ToolFailure as moved:
                    stopped.append(moved.message.split(" after the permission check")[0])
                    return
            await trusted.press(send.on(session), combo)
            done[0] += 1

    times = f"{params.repeat} times"
    result = await _act(call, browser, client, writer, presses, f"Pressed {combo.describe()} {times} on {where} with "
                        f"{TRUSTED_NOTE}.", {"key": combo.describe(), "repeat": params.repeat}, session, check=check)
    if stopped:
        result.text = result.text.replace(f" {times} on ", f" {done[0]} of {times} on ", 1).replace(
            TRUSTED_NOTE + ".", f"{TRUSTED_NOTE}; then {stopped[0]}, so the rest were not sent.", 1)
        result.details["pressed"] = done[0]
    return result


async def click_xy(call: ToolCall, browser: "BrowserGateway") -> ToolResult:
    """Click at viewport coordinates (for canvases and other places without a ref)."""
    params = call.params
    assert isinstance(params, ClickXYParams) and call.tab_id is not None
    landing = landing_of(call)
    action = Action()
    async with debugger(call.tab_id, browser, action, write=True) as client:
        writer = action.writer = Writer(client, writer_epoch(client, landing))
        (hit,) = await confirm_points(client, landing)
        kind = "Double-clicked" if params.double_click else "Clicked"
        return await _act(call, browser, client, writer,
                          lambda send: trusted.click(send.on(hit.session_id), hit.x, hit.y, button=params.button,
                                                     double=params.double_click),
                          f"{kind} at ({params.x:g}, {params.y:g}) with {TRUSTED_NOTE}.", {"point": {"x": params.x, "y": params.y}},
                          hit.session_id)


async def drag(call: ToolCall, browser: "BrowserGateway") -> ToolResult:
    """Drag from one viewport point to another."""
    params = call.params
    assert isinstance(params, DragParams) and call.tab_id is not None
    start, end = (params.start.x, params.start.y), (params.to.x, params.to.y)
    landing = landing_of(call)
    action = Action()
    async with debugger(call.tab_id, browser, action, write=True) as client:
        writer = action.writer = Writer(client, writer_epoch(client, landing))
        first, _ = await confirm_points(client, landing)  # both ends are still where they were judged
        dx, dy = first.x - start[0], first.y - start[1]  # the whole drag in the frame where it starts
        return await _act(call, browser, client, writer,
                          lambda send: trusted.drag(send.on(first.session_id), (first.x, first.y), (end[0] + dx, end[1] + dy)),
                          f"Dragged from ({start[0]:g}, {start[1]:g}) to ({end[0]:g}, {end[1]:g}) with {TRUSTED_NOTE}.",
                          {"from": {"x": start[0], "y": start[1]}, "to": {"x": end[0], "y": end[1]}}, first.session_id)


_SET_FILES = """function (name, mime, data) {
  const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
  const transfer = new DataTransfer();
  transfer.items.add(new File([bytes], name, { type: mime }));
  this.files = transfer.files;
  this.dispatchEvent(new Event("input", { bubbles: true }));
  this.dispatchEvent(new Event("change", { bubbles: true }));
  return this.files.length;
}"""


async def upload_file(call: ToolCall, browser: "BrowserGateway") -> ToolResult:
    """Put a file the user attached to this task into a file input."""
    params = call.params
    assert isinstance(params, UploadFileParams) and call.tab_id is not None
    attachment = browser.attachments.for_upload(call.thread_id, params.attachment_id)
    landing = landing_of(call)
    action = Action()
    async with debugger(call.tab_id, browser, action, write=True) as client:
        target = await resolve_target(call, browser, client, params.ref)
        check_node(landing, target)
        described = await client.send("DOM.describeNode", {"backendNodeId": target.backend_node_id},
                                      session_id=target.session_id)
        node = described.get("node") or {}
        attrs = node.get("attributes") or []
        kind = dict(zip(attrs[0::2], attrs[1::2])).get("type", "").lower()
        if node.get("localName") != "input" or kind != "file":
            raise ToolFailure(ToolCode.NOT_EDITABLE, f"{target.describe()} is not a file input", phase="precheck",
                              details={"dispatched": False})
        writer = action.writer = Writer(client, target.epoch)
        await confirm_shown(browser, client, target)
        resolved = await writer("DOM.resolveNode", {"backendNodeId": target.backend_node_id}, target.session_id)
        count = await writer("Runtime.callFunctionOn", {
            "objectId": resolved["object"]["objectId"], "functionDeclaration": _SET_FILES, "returnByValue": True,
            "arguments": [{"value": attachment.name}, {"value": attachment.mime},
                          {"value": base64.b64encode(attachment.data).decode("ascii")}]}, target.session_id)
    browser.routes.touch(call.thread_id, call.tab_id, wrote=True)
    files = (count.get("result") or {}).get("value")
    evidence = {"attempts": [{"phase": "execute", "strategy": "l2", "ok": True}], "strategy": "cdp",
                "effectState": "verified" if files == 1 else "dispatched", "outcome": "verified" if files == 1 else "uncertain"}
    return success(call.tool, f"Put {attachment.name} ({len(attachment.data)} bytes) into {target.describe()}.",
                   tab_id=call.tab_id, details={"dispatched": True, "evidence": evidence, "attachmentId": attachment.id})
