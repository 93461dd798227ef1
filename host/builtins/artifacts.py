"""Artifacts: UTF-8 files the model writes (`artifact`), kept as attachments of their thread and
offered for download through the browser (`downloads.download` with a data: URL, so the file
never leaves this machine on its way).

Only plain-text kinds are accepted (no HTML or SVG: a saved file opened from disk could run
script), and the size is capped by builtins.json.
"""

from __future__ import annotations

import base64
import os
from typing import Any, Protocol

from host.builtins.refusals import BuiltinRefused


class Attachment(Protocol):
    """A file kept with a thread (the engine's attachment rows)."""

    id: str
    thread_id: str
    name: str
    mime: str
    size: int
    created_at: float
    content: bytes | None


class AttachmentStore(Protocol):
    """Where attachments are kept (the engine's store)."""

    def add_attachment(self, *, thread_id: str, item_id: str | None, name: str, mime: str, content: bytes,
                       source: str, now: float) -> Attachment: ...

TYPES: dict[str, str] = {
    ".txt": "text/plain", ".md": "text/markdown", ".csv": "text/csv", ".tsv": "text/tab-separated-values",
    ".json": "application/json", ".xml": "application/xml", ".yaml": "application/yaml", ".yml": "application/yaml",
    ".log": "text/plain", ".ics": "text/calendar",
}
SOURCE = "artifact"


class ArtifactRefused(BuiltinRefused, ValueError):
    """An artifact that cannot be saved or offered; `code`: unsupported_type, too_large, not_found."""


def mime_for(name: str) -> str:
    """The type of a file name by its extension; ArtifactRefused `unsupported_type` otherwise."""
    extension = os.path.splitext(name)[1].lower()
    mime = TYPES.get(extension)
    if mime is None:
        raise ArtifactRefused("unsupported_type", f"{name!r}: artifacts are plain-text files ending in "
                                                  f"{', '.join(sorted(TYPES))}")
    return mime


def save(store: AttachmentStore, *, thread_id: str, item_id: str | None, name: str, content: str, max_bytes: int,
         now: float) -> Attachment:
    """Keep `content` with the thread; ArtifactRefused when its type or size is not allowed."""
    mime = mime_for(name)
    data = content.encode("utf-8")
    if len(data) > max_bytes:
        raise ArtifactRefused("too_large", f"{name!r} is {len(data)} bytes; artifacts hold at most {max_bytes}")
    return store.add_attachment(thread_id=thread_id, item_id=item_id, name=name, mime=mime, content=data,
                                source=SOURCE, now=now)


def wire(row: Attachment) -> dict[str, Any]:
    """An attachment's description (no bytes) as JSON."""
    return {"artifactId": row.id, "threadId": row.thread_id, "name": row.name, "mime": row.mime, "size": row.size,
            "createdAt": row.created_at}


def data_url(row: Attachment) -> str:
    """The file as a data: URL (what the browser downloads)."""
    assert row.content is not None
    return f"data:{row.mime};charset=utf-8;base64,{base64.b64encode(row.content).decode('ascii')}"


async def offer(bridge: Any, row: Attachment) -> int:
    """Ask the browser to save the artifact in the downloads folder; returns the download id."""
    return int(await bridge.api("downloads.download", {"url": data_url(row), "filename": row.name,
                                                        "conflictAction": "uniquify", "saveAs": False}))
