"""The gateway's requests to the extension, with transport errors turned into tool failures:
`api` (an allow-listed extension API, L0), `content` (the page executor, L1) and
`install_guard` (the navigation guard's rules)."""

from __future__ import annotations

from typing import Any, Awaitable, Callable

import msgspec

from protocol.guard import GuardRule
from protocol.messages import BrowserCall, ContentCall, GuardInstall

from host.tools.failure import ToolCode, ToolFailure
from host.browser.wire import ExecuteResult
from host.transport.errors import Disconnected, Overloaded, RemoteError, RequestError, RequestTimeout

# The page executor enforces the deadline itself and answers with its own timeout; the host
# waits this much longer before it gives up on the answer.
CONTENT_GRACE_S = 3.0


class Bridge:
    """Requests to the connected extension. `endpoint` is a callable returning the live
    Endpoint (or None when no browser is connected)."""

    def __init__(self, endpoint: Callable[[], Any]):
        self._endpoint = endpoint

    def _live(self):
        endpoint = self._endpoint()
        if endpoint is None or not endpoint.is_open:
            raise ToolFailure(ToolCode.NOT_CONNECTED, "no browser is connected to the host", phase="dispatch",
                              retryable=True, details={"dispatched": False})
        return endpoint

    async def api(self, name: str, *args: Any, timeout: float = 10.0) -> Any:
        """Call the extension API `name` (e.g. "tabs.get") with `args`."""
        return await self._request(lambda i: BrowserCall(id=i, api=name, args=list(args),
                                                         deadline_ms=int(timeout * 1000)), timeout, "dispatch")

    async def install_guard(self, rules: list[GuardRule], *, timeout: float = 10.0) -> Any:
        """Replace the navigation guard's rules in the browser; returns once they are in force."""
        return await self.install_guard_now(rules, timeout=timeout)

    def install_guard_now(self, rules: list[GuardRule], *, timeout: float = 10.0) -> Awaitable[Any]:
        """`install_guard`, with the install sent before this returns (a page load sent after it
        may wait for it in the extension: `navigate_and_wait`'s `after_guard`). Await the result."""
        return self._begin(lambda i: GuardInstall(id=i, rules=rules), timeout, "precheck")

    def api_now(self, name: str, *args: Any, timeout: float = 10.0) -> Awaitable[Any]:
        """`api`, with the call sent before this returns: a request sent after it is handled
        after it (the extension starts each call in the order they arrive). Await the result."""
        return self._begin(lambda i: BrowserCall(id=i, api=name, args=list(args), deadline_ms=int(timeout * 1000)),
                           timeout, "dispatch")

    async def _request(self, build: Any, timeout: float, phase: str) -> Any:
        """One request; its failures as ToolFailures of `phase`."""
        return await self._begin(build, timeout, phase)

    def _begin(self, build: Any, timeout: float, phase: str) -> Awaitable[Any]:
        """Send one request now; what waits for its answer (failures as ToolFailures of `phase`)."""
        endpoint = self._live()
        try:
            waiting = endpoint.begin(build, timeout)
        except (Disconnected, Overloaded) as exc:
            raise ToolFailure(exc.code, exc.info.message, phase=phase, retryable=True) from None
        return self._answer(waiting, phase)

    async def _answer(self, waiting: Awaitable[Any], phase: str) -> Any:
        try:
            return await waiting
        except RemoteError as exc:
            raise ToolFailure.from_info(exc.info) from None
        except RequestTimeout as exc:
            raise ToolFailure(ToolCode.TIMEOUT, exc.info.message, phase=phase, retryable=True) from None
        except (Disconnected, Overloaded) as exc:
            raise ToolFailure(exc.code, exc.info.message, phase=phase, retryable=True) from None
        except RequestError as exc:
            raise ToolFailure(exc.code, exc.info.message, phase=phase) from None

    async def content(self, tab_id: int, tool: str, params: dict[str, Any], *, write: bool, deadline_ms: int = 15_000,
                      frame_id: int = 0, expect_url: str | None = None) -> ExecuteResult:
        """Run a page-executor tool; returns its result, validated. `expect_url`: the URL the
        tab must still show for the call to be sent to the page (`target_changed` otherwise)."""
        endpoint = self._live()
        try:
            value = await endpoint.request(
                lambda i: ContentCall(id=i, tab_id=tab_id, frame_id=frame_id, tool=tool, params=params,
                                      deadline_ms=deadline_ms, write=write, expect_url=expect_url),
                deadline_ms / 1000 + CONTENT_GRACE_S,
            )
        except RemoteError as exc:
            raise ToolFailure.from_info(exc.info) from None
        except RequestTimeout:
            details: dict[str, Any] = {"dispatched": True}
            if write:
                details["effectMayHaveOccurred"] = True
            raise ToolFailure(ToolCode.TIMEOUT, f"{tool} got no answer within {deadline_ms / 1000 + CONTENT_GRACE_S:g} s; "
                              "the request was cancelled", phase="settle", retryable=not write, details=details) from None
        except Overloaded as exc:
            raise ToolFailure(exc.code, exc.info.message, phase="dispatch", retryable=True,
                              details={"dispatched": False}) from None
        except Disconnected as exc:
            # The link closed while the page may have been acting: unknown, so never replayed.
            lost = {"dispatched": True, "effectMayHaveOccurred": True} if write else {}
            raise ToolFailure(exc.code, exc.info.message, phase="settle", retryable=not write, details=lost) from None
        except RequestError as exc:
            raise ToolFailure(exc.code, exc.info.message, phase="settle") from None
        try:
            return msgspec.convert(value, ExecuteResult)
        except msgspec.ValidationError as exc:
            raise ToolFailure(ToolCode.UNKNOWN, f"invalid content-script response for {tool}: {exc}", phase="settle",
                              details={"dispatched": True}) from None
