"""Files the user handed to a thread, the only files a file upload may put into a page.

Kept in memory for the life of the host process (the UI or the control socket adds them); an
attachment belongs to one thread, carries its provenance, and is at most 8 MiB.
"""

from __future__ import annotations

import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass

from host.tools.failure import ToolCode, ToolFailure

MAX_BYTES = 8 * 1024 * 1024
MAX_ATTACHMENTS = 64
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


@dataclass(frozen=True)
class Attachment:
    id: str
    thread_id: str
    name: str
    mime: str
    data: bytes
    provenance: str  # "user": handed over by the user; anything else may not be uploaded
    created_at: float


class Attachments:
    """Attachments of every thread (bounded: the oldest go first)."""

    def __init__(self) -> None:
        self._items: OrderedDict[str, Attachment] = OrderedDict()

    def add(self, thread_id: str, name: str, data: bytes, *, mime: str = "application/octet-stream",
            provenance: str = "user") -> Attachment:
        """Store a file for a thread; raises ValueError when it is too large or badly named."""
        if len(data) > MAX_BYTES:
            raise ValueError(f"attachments are limited to {MAX_BYTES} bytes ({len(data)} given)")
        if not name or len(name) > 255 or "/" in name or "\\" in name or "\x00" in name:
            raise ValueError("an attachment needs a plain file name of 1..255 characters")
        # Letters only: an id must never look like a card number to the payload check.
        item = Attachment("att-" + "".join(secrets.choice(_LETTERS) for _ in range(16)), thread_id, name, mime[:255] or "application/octet-stream", data,
                          provenance, time.time())
        self._items[item.id] = item
        while len(self._items) > MAX_ATTACHMENTS:
            self._items.popitem(last=False)
        return item

    def for_upload(self, thread_id: str, attachment_id: str) -> Attachment:
        """The attachment a thread may upload; `attachment_not_found` otherwise (another
        thread's file, one the page or a tool produced, or none at all)."""
        item = self._items.get(attachment_id)
        if item is None or item.thread_id != thread_id:
            raise ToolFailure(ToolCode.ATTACHMENT_NOT_FOUND, f"there is no attachment {attachment_id!r} in this task; only "
                              "files the user attached can be uploaded", phase="validate", details={"dispatched": False})
        if item.provenance != "user":
            raise ToolFailure(ToolCode.DENIED, f"attachment {attachment_id!r} did not come from the user and cannot be uploaded",
                              phase="validate", details={"dispatched": False})
        return item

    def list(self, thread_id: str) -> list[dict]:
        """What a thread has (no content)."""
        return [{"id": a.id, "name": a.name, "mime": a.mime, "bytes": len(a.data), "provenance": a.provenance}
                for a in self._items.values() if a.thread_id == thread_id]
