"""Trusted input through `Input.dispatch*Event`: mouse clicks and drags at viewport
coordinates (CSS pixels of the top-level page), key combinations and typed text with real key
codes. Every event goes through `send`, which is bound to the tab's lifecycle epoch: if the page
changes between two events of one action, the rest is not sent.

Mouse moves are not waited for one by one: in a tab nobody is looking at, the browser
acknowledges a move only at the page's next frame, which may not come for seconds; the press or
release that follows delivers the queued moves first, and their acknowledgements with them."""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Protocol

from host.browser.l2.keys import ALT, CONTROL, META, SHIFT, Combo, KeyDef, for_char


class Send(Protocol):
    """Sends one input command (bound to a session and an epoch); `begin` does not wait for
    its acknowledgement."""

    def __call__(self, method: str, params: dict[str, Any]) -> Awaitable[Any]: ...

    def begin(self, method: str, params: dict[str, Any]) -> "asyncio.Future[Any]": ...

BUTTON_MASK = {"left": 1, "right": 2, "middle": 4}
# Text longer than this is typed with key events up to here, then inserted as text (input
# events stay trusted, but no key events are sent for the rest).
MAX_KEYED_CHARS = 500
DRAG_STEPS = 12


async def click(send: Send, x: float, y: float, *, button: str = "left", double: bool = False) -> None:
    """Move to (x, y) and click (twice for a double click)."""
    moved = send.begin("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y, "button": "none", "buttons": 0})
    try:
        for count in ((1, 2) if double else (1,)):
            await send("Input.dispatchMouseEvent", {"type": "mousePressed", "x": x, "y": y, "button": button,
                                                    "buttons": BUTTON_MASK[button], "clickCount": count})
            await send("Input.dispatchMouseEvent", {"type": "mouseReleased", "x": x, "y": y, "button": button,
                                                    "buttons": 0, "clickCount": count})
    finally:
        await _settle(moved)


async def drag(send: Send, start: tuple[float, float], end: tuple[float, float], steps: int = DRAG_STEPS) -> None:
    """Press at `start`, move in steps, release at `end`."""
    (x0, y0), (x1, y1) = start, end
    moves = [send.begin("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x0, "y": y0, "button": "none", "buttons": 0})]
    try:
        await send("Input.dispatchMouseEvent", {"type": "mousePressed", "x": x0, "y": y0, "button": "left", "buttons": 1,
                                                "clickCount": 1})
        for step in range(1, steps + 1):
            x = x0 + (x1 - x0) * step / steps
            y = y0 + (y1 - y0) * step / steps
            moves.append(send.begin("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y, "button": "left",
                                                                 "buttons": 1}))
        await send("Input.dispatchMouseEvent", {"type": "mouseReleased", "x": x1, "y": y1, "button": "left",
                                                "buttons": 0, "clickCount": 1})
    finally:
        for move in moves:
            await _settle(move)


async def _settle(future: "asyncio.Future[Any]") -> None:
    """Wait for a move sent earlier; its failure is reported by the command that follows it."""
    try:
        await future
    except Exception:
        pass


def _key_params(kind: str, key: KeyDef, modifiers: int, *, shifted: bool = False) -> dict[str, Any]:
    shown = key.shift_key if shifted and key.shift_key else key.key
    params: dict[str, Any] = {"type": kind, "modifiers": modifiers, "key": shown, "code": key.code,
                              "windowsVirtualKeyCode": key.key_code, "nativeVirtualKeyCode": key.key_code}
    if key.location:
        params["location"] = key.location
    return params


async def _stroke(send: Send, key: KeyDef, modifiers: int, *, shifted: bool = False) -> None:
    # Keys type their text only without Control/Alt/Meta held (those make shortcuts).
    text = (key.shift_key if shifted and key.shift_key else key.text) if not modifiers & (CONTROL | ALT | META) else ""
    down = _key_params("keyDown" if text else "rawKeyDown", key, modifiers, shifted=shifted)
    if text:
        down["text"] = text
        down["unmodifiedText"] = text
    await send("Input.dispatchKeyEvent", down)
    await send("Input.dispatchKeyEvent", _key_params("keyUp", key, modifiers, shifted=shifted))


async def press(send: Send, combo: Combo) -> None:
    """Press a combination: modifiers down in order, the key, everything up in reverse."""
    from host.browser.l2.keys import MODIFIERS

    mask = 0
    for name in combo.modifiers:
        key, bit = MODIFIERS[name]
        mask |= bit
        await send("Input.dispatchKeyEvent", _key_params("rawKeyDown", key, mask))
    if combo.key is not None:
        await _stroke(send, combo.key, mask, shifted=bool(mask & SHIFT))
    for name in reversed(combo.modifiers):
        key, bit = MODIFIERS[name]
        mask &= ~bit
        await send("Input.dispatchKeyEvent", _key_params("keyUp", key, mask))


async def type_text(send: Send, text: str) -> str:
    """Type `text` with one key event pair per character (Shift where the US layout needs it);
    past MAX_KEYED_CHARS the rest is inserted as text. Returns the strategy used."""
    from host.browser.l2.keys import MODIFIERS

    keyed, rest = text[:MAX_KEYED_CHARS], text[MAX_KEYED_CHARS:]
    shift_key = MODIFIERS["Shift"][0]
    for char in keyed:
        key, shifted = for_char(char)
        if shifted:
            await send("Input.dispatchKeyEvent", _key_params("rawKeyDown", shift_key, SHIFT))
            await _stroke(send, key, SHIFT, shifted=True)
            await send("Input.dispatchKeyEvent", _key_params("keyUp", shift_key, 0))
        else:
            await _stroke(send, key, 0)
    if rest:
        await send("Input.insertText", {"text": rest})
        return "key_events+insert_text"
    return "key_events"
