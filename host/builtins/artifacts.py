"""Artifacts: UTF-8 files the model writes (`artifact`), kept as attachments of their thread and
offered for download through the browser (`downloads.download` with a data: URL, so the file
never leaves this machine on its way).

Only plain-text kinds are accepted (no HTML or SVG: a saved file opened from disk could run
script), and the size is capped by builtins.json.
"""

from __future__ import annotations

import base64
import os
from typing import Any

from host.engine.records import AttachmentRow
from host.engine.store import EngineStore, new_id

TYPES: dict[str, str] = {
    ".txt": "text/plain", ".md": "text/markdown", ".csv": "text/csv", ".tsv": "text/tab-separated-values",
    ".json": "application/json", ".xml": "application/xml", ".yaml": "application/yaml", ".yml": "application/yaml",
    ".log": "text/plain", ".ics": "text/calendar",
}
SOURCE = "artifact"


class ArtifactRefused(ValueError):
    """An artifact that cannot be saved or offered; `code`: unsupported_type, too_large, not_found."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


def mime_for(name: str) -> str:
    """The type of a file name by its extension; ArtifactRefused `unsupported_type` otherwise."""
    extension = os.path.splitext(name)[1].lower()
    mime = TYPES.get(extension)
    if mime is None:
        raise ArtifactRefused("unsupported_type", f"{name!r}: artifacts are plain-text files ending in "
                                                  f"{', '.join(sorted(TYPES))}")
    return mime


def save(store: EngineStore, *, thread_id: str, item_id: str | None, name: str, content: str, max_bytes: int,
         now: float) -> AttachmentRow:
    """Keep `content` with the thread; ArtifactRefused when its type or size is not allowed."""
    mime = mime_for(name)
    data = content.encode("utf-8")
    if len(data) > max_bytes:
        raise ArtifactRefused("too_large", f"{name!r} is {len(data)} bytes; artifacts hold at most {max_bytes}")
    row = AttachmentRow(id=new_id(), thread_id=thread_id, item_id=item_id, name=name, mime=mime, size=len(data),
                        source=SOURCE, created_at=now, content=data)
    with store.transaction() as conn:
        store.insert_attachment(conn, row)
    return row


def wire(row: AttachmentRow) -> dict[str, Any]:
    """An attachment's description (no bytes) as JSON."""
    return {"artifactId": row.id, "threadId": row.thread_id, "name": row.name, "mime": row.mime, "size": row.size,
            "createdAt": row.created_at}


def data_url(row: AttachmentRow) -> str:
    """The file as a data: URL (what the browser downloads)."""
    assert row.content is not None
    return f"data:{row.mime};charset=utf-8;base64,{base64.b64encode(row.content).decode('ascii')}"


async def offer(bridge: Any, row: AttachmentRow) -> int:
    """Ask the browser to save the artifact in the downloads folder; returns the download id."""
    return int(await bridge.api("downloads.download", {"url": data_url(row), "filename": row.name,
                                                        "conflictAction": "uniquify", "saveAs": False}))
