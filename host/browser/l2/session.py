"""Holding a tab's debugger for one call: the user's stop is honoured before anything attaches,
and CDP failures become the tool failures the model reads."""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, AsyncIterator

from host.browser.l2.targets import Writer, cdp_failure
from host.cdp.client import TabClient
from host.cdp.errors import CdpError
from host.tools.failure import ToolCode, ToolFailure

if TYPE_CHECKING:
    from host.browser.gateway import BrowserGateway


class Action:
    """What an L2 call has sent so far (decides whether a failure may have had an effect)."""

    writer: Writer | None = None

    @property
    def sent(self) -> int:
        return self.writer.sent if self.writer is not None else 0


def check_not_stopped(browser: "BrowserGateway", tab_id: int) -> None:
    """Raise `debugger_cancelled` when the user stopped the debugger in this tab (nothing attaches)."""
    stopped = browser.cdp.user_stopped(tab_id)
    if stopped:
        raise ToolFailure(ToolCode.DEBUGGER_CANCELLED, f"the user stopped the debugger in tab {tab_id} (they dismissed the "
                          "browser's debugging bar); trusted tools stay off there until the user's next message",
                          phase="precheck", details={"dispatched": False, "reason": stopped})


@asynccontextmanager
async def debugger(tab_id: int, browser: "BrowserGateway", action: Action | None = None, *,
                   write: bool) -> AsyncIterator[TabClient]:
    """Hold the debugger for the tab; CDP failures become tool failures (`write` and what
    `action` sent say whether the call may have acted)."""
    check_not_stopped(browser, tab_id)
    try:
        async with browser.cdp.use(tab_id) as client:
            yield client
    except CdpError as exc:
        raise cdp_failure(exc, write=write, sent=action.sent if action else 0) from None
