"""download: the browser downloads a URL (with its own cookies and network position, like a
navigation), into the user's downloads folder. The gatekeeper judged the destination; this
asks the extension (`downloads.download`) and follows the download until it ends or the wait
runs out."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from host.tools.quoting import quoted

POLL_S = 0.25


@dataclass
class DownloadResult:
    """How a download ended (or how far it got)."""

    ok: bool
    text: str
    code: str | None = None
    details: dict[str, Any] = field(default_factory=dict)


async def download(bridge: Any, url: str, filename: str | None, *, wait_s: float) -> DownloadResult:
    """Start the download and wait up to `wait_s` for it to finish."""
    options: dict[str, Any] = {"url": url, "conflictAction": "uniquify", "saveAs": False}
    if filename:
        options["filename"] = filename
    download_id = int(await bridge.api("downloads.download", options))
    return await follow(bridge, download_id, wait_s=wait_s)


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
                   "bytesReceived": item.get("bytesReceived"), "totalBytes": item.get("totalBytes")}
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
