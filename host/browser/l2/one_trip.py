"""A key press in one trip to the browser. Sent one by one, the network tracking, the last look
at the focus, the key events and the round trip after them each cost a native-messaging hop;
here they go as one `cdp.batch`, which the extension runs command after command:

    1. Network.enable in every session tracked (requests are seen from before the input); the
       tabs are listed meanwhile (a tab the press opens, where this one is now)
    2. the look: in our probe world of the top frame, the focus is still on the element the
       press was judged with (so still in that frame), and that element holds no shadow root that
       could hide a frame; any other answer, or a document gone, ends the batch before any key,
       and the call as `target_changed` (a look that could not be sent at all fails as the
       debugger did); the keys follow its answer with nothing in between
    3. the key events (one combination: once its key is down, only releases follow, so the
       keys are not checked against the page's lifecycle one by one as typing is)
    4. the flush: in our isolated world, the page's handlers have run, and where the focus is now

It applies to the common case, a press without a ref whose focus is in the top frame, once that
frame's probe world and our isolated world there are known in the tab's lifecycle epoch (the
previous look made them), and the batch fits its step limit; otherwise the caller takes the
step-by-step path, as it does when a session's tracking could not start (no key was sent then).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from protocol.errors import ErrorInfo
from protocol.messages import MAX_BATCH_STEPS, CdpStep

from host.browser import page_writes
from host.browser.l2 import input as trusted
from host.browser.l2.after_input import report_input
from host.browser.l2.focus import focus_stays_step
from host.browser.l2.keys import Combo
from host.browser.l2.landing import landing_of, moved_since_judged
from host.browser.l2.network_idle import Flushed, NetworkIdle
from host.browser.l2.targets import Writer, cdp_failure
from host.cdp.client import TabClient
from host.cdp.errors import CdpCode, CdpError
from host.tools.call import ToolCall
from host.tools.result import ToolResult

if TYPE_CHECKING:
    from host.browser.gateway import BrowserGateway


def _cdp_error(error: ErrorInfo, *, sent: bool) -> CdpError:
    """A batch step's failure as the CdpError the tool failure is made from; `sent`: whether
    the step may have reached the page (the extension says when it surely did not)."""
    details = dict(error.details or {})
    dispatched = sent and details.get("dispatched") is not False
    return CdpError(error.code, error.message, retryable=error.retryable, dispatched=dispatched, details=details)


class _Gather:
    """A sender the input helpers write to: it keeps the commands for the batch."""

    def __init__(self) -> None:
        self.steps: list[CdpStep] = []

    async def __call__(self, method: str, params: dict[str, Any]) -> None:
        self.steps.append(CdpStep(method=method, params=params))


async def press_in_one_trip(call: ToolCall, browser: "BrowserGateway", client: TabClient, writer: Writer, combo: Combo,
                            text: str, details: dict[str, Any]) -> ToolResult | None:
    """Press `combo` on the focused element in one batch (see the module); None when the
    press does not fit it (nothing was sent: take the step-by-step path). Raises ToolFailure."""
    landing = landing_of(call)
    if landing.kind != "focus" or landing.session_id is not None:
        return None
    looks = focus_stays_step(client, landing.frame_id)
    context = client.state.contexts.get((None, landing.frame_id))
    if looks is None or context is None:
        return None
    looks = [looks[0], *(msgspec.structs.replace(step, overlap=True) for step in looks[1:])]
    keys = _Gather()
    await trusted.press(keys, combo)
    async with NetworkIdle(client, enable=False) as network:
        tracking = [step if i == 0 else msgspec.structs.replace(step, overlap=True)
                    for i, step in enumerate(network.enable_steps())]
        steps = [*tracking, *looks, *keys.steps, NetworkIdle.flush_step(context)]
        if len(steps) > MAX_BATCH_STEPS:
            return None  # many frame sessions: one trip each
        at_look, flush = len(tracking), len(steps) - 1
        first_key = at_look + len(looks)
        try:
            outcome = await client.batch(steps, expect_epoch=writer.epoch, list_tabs=True)
        except CdpError as exc:
            raise cdp_failure(exc, write=True) from None
        stop, error = outcome.stopped_at, outcome.error
        if stop is not None and stop < at_look:
            return None  # a session's tracking could not start; no key was sent
        if stop is not None and stop < first_key:
            if error is None:
                raise moved_since_judged("the keyboard focus moved (to another element, frame or shadow root)")
            if error.code == CdpCode.PROTOCOL_ERROR:  # the look's world went with its document
                raise moved_since_judged(f"the page changed ({error.message})")
            raise cdp_failure(_cdp_error(error, sent=False), write=True)
        writer.sent += (stop if stop is not None and stop < flush else flush) - first_key
        if stop is not None and stop < flush and error is not None:
            raise cdp_failure(_cdp_error(error, sent=True), write=True, sent=writer.sent)
        read = NetworkIdle.flushed(outcome.results[flush]) if stop is None else Flushed()
        settled = await network.wait(flushed=read)
    before = page_writes.ids_of(outcome.tabs_before) if outcome.tabs_before is not None else None
    return await report_input(call, browser, client, writer, landing, settled, None, before, text, details,
                              tabs_after=outcome.tabs_after)
