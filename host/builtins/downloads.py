"""download: the browser downloads a URL (with its own cookies and network position, like a
navigation), into the user's downloads folder. The gatekeeper judged the destination.

The downloads API's own requests escape the navigation guard, so the redirect hops are judged
first, one by one, in a guarded background tab (`host/browser/navguard/probe.py`): a hop to a
place the thread may not reach ends the call (`navigation_blocked`) before its request leaves.
The file is then the download the browser started from that tab or, when the chain ended in a
page or a file name was asked for, a download of the chain's last URL (which was judged). Should
that request be sent somewhere else after all, to a place the thread may not reach, the download
is cancelled and its file removed, and the call says so. Then the download is followed until it
ends or the wait runs out."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import Any

from host.browser.navguard import probe
from host.gatekeeper.origins import normalize_origin
from host.tools.failure import ToolCode, ToolFailure
from host.tools.quoting import quoted

POLL_S = 0.25
PROBE_S = 30.0


@dataclass
class DownloadResult:
    """How a download ended (or how far it got)."""

    ok: bool
    text: str
    code: str | None = None
    details: dict[str, Any] = field(default_factory=dict)


async def download(bridge: Any, url: str, filename: str | None, *, wait_s: float, guard: Any,
                   thread_id: str) -> DownloadResult:
    """Judge the redirect hops, start the download and wait up to `wait_s` for it to finish."""
    followed = await probe.follow(guard, thread_id, url, timeout_s=PROBE_S)
    if followed.outcome == "blocked":
        # Where the redirects lead is the server's choice: quoted as data, like the URL asked for.
        return DownloadResult(False, f"Error {ToolCode.NAVIGATION_BLOCKED}: {quoted(url, 2000)} leads to "
                                     f"{quoted(followed.url, 2000)}, at {quoted(followed.origin)}, which this task may "
                                     f"not reach ({followed.reason}); the browser blocked that request, so nothing "
                                     "was downloaded.", code=ToolCode.NAVIGATION_BLOCKED,
                              details={"dispatched": True, "blockedOrigin": followed.origin, "blockedUrl": followed.url,
                                       "reasonCode": followed.reason_code})
    if followed.outcome not in ("page", "download"):
        why = followed.error or ("no answer in time" if followed.outcome == "timeout" else "unknown")
        return DownloadResult(False, f"The download could not start: loading {quoted(url, 2000)} ended with "
                                     f"{quoted(why)}.",
                              code=ToolCode.DOWNLOAD_FAILED, details={"dispatched": True, "url": followed.url})
    if followed.download_id is not None and not filename:
        return await follow(bridge, followed.download_id, wait_s=wait_s)
    if followed.download_id is not None:  # a name was asked for, which only the downloads API can give
        with contextlib.suppress(ToolFailure):
            await bridge.api("downloads.cancel", followed.download_id)
            await bridge.api("downloads.erase", {"id": followed.download_id})
    options: dict[str, Any] = {"url": followed.url, "conflictAction": "uniquify", "saveAs": False}
    if filename:
        options["filename"] = filename
    download_id = int(await bridge.api("downloads.download", options))
    result = await follow(bridge, download_id, wait_s=wait_s)
    return await _held_to_the_chain(bridge, guard, thread_id, followed.url, result)


async def _held_to_the_chain(bridge: Any, guard: Any, thread_id: str, judged: str, result: DownloadResult) -> DownloadResult:
    """The download of the judged URL went elsewhere after all: cancel it when the thread may not
    go there."""
    final = str(result.details.get("finalUrl") or "")
    if not final or normalize_origin(final).text == normalize_origin(judged).text:
        return result
    decision = guard.denial(thread_id, final, "download")
    if decision is None:
        return result
    download_id = result.details.get("downloadId")
    with contextlib.suppress(ToolFailure):
        await bridge.api("downloads.cancel", download_id)
        await bridge.api("downloads.removeFile", download_id)
    origin = normalize_origin(final).text
    guard.audit_blocked(thread_id, "download", final, decision)
    return DownloadResult(False, f"Error {ToolCode.NAVIGATION_BLOCKED}: the download of {quoted(judged, 2000)} was "
                                 f"redirected to {quoted(final, 2000)}, at {quoted(origin)}, which this task may not "
                                 f"reach ({decision.reason}); it was cancelled and its file removed.",
                          code=ToolCode.NAVIGATION_BLOCKED,
                          details={**result.details, "dispatched": True, "effectMayHaveOccurred": True,
                                   "blockedOrigin": origin, "blockedUrl": final, "reasonCode": decision.code})


async def follow(bridge: Any, download_id: int, *, wait_s: float) -> DownloadResult:
    """Poll a download until it completes, fails, or `wait_s` passes."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait_s
    item: dict[str, Any] = {}
    while True:
        found = await bridge.api("downloads.search", {"id": download_id})
        item = found[0] if isinstance(found, list) and found and isinstance(found[0], dict) else {}
        state = item.get("state")
        details = {"downloadId": download_id, "filename": item.get("filename", ""), "state": state,
                   "bytesReceived": item.get("bytesReceived"), "totalBytes": item.get("totalBytes"),
                   "finalUrl": item.get("finalUrl") or item.get("url") or ""}
        # The result is our report of what the browser did (stored trusted, not fenced), so what
        # the server chose in it (the final URL after its redirects, the file name it suggested)
        # and what the browser says are quoted as data.
        if state == "complete":
            return DownloadResult(True, f"Downloaded {quoted(item.get('finalUrl') or item.get('url') or '', 2000)} to "
                                        f"{quoted(item.get('filename') or '', 1000)} "
                                        f"({_number(item.get('fileSize', item.get('bytesReceived')))} bytes).",
                                  details=details)
        if state == "interrupted":
            return DownloadResult(False, f"The download failed: {quoted(item.get('error') or 'interrupted')}.",
                                  code="download_failed", details=details)
        if loop.time() >= deadline:
            return DownloadResult(True, f"The download (id {download_id}) is still running "
                                        f"({_number(item.get('bytesReceived', 0))} bytes so far); it continues in the "
                                        "browser.",
                                  details=details)
        await asyncio.sleep(POLL_S)


def _number(value: Any) -> str:
    """A byte count as the browser reported it; anything but a number is quoted."""
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else quoted(value)
