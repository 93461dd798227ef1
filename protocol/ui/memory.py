"""The profile's memory (settings page): listing, writing, deleting and clearing entries, and
the state every page gets after a change."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from protocol.ui.common import Count, Epoch, Shape, SubmissionId, UiMessage

MemoryKey = Annotated[str, msgspec.Meta(min_length=1, max_length=100)]


class MemoryList(UiMessage, tag="memory.list", kw_only=True):
    """The profile's memory (answered with `memory.state`)."""

    submission_id: SubmissionId
    query: Annotated[str, msgspec.Meta(max_length=200)] | None = None


class MemorySet(UiMessage, tag="memory.set", kw_only=True):
    """Create or replace a memory (within the configured limits); every page then gets
    `memory.state`."""

    submission_id: SubmissionId
    key: MemoryKey
    value: Annotated[str, msgspec.Meta(max_length=4000)]


class MemoryDelete(UiMessage, tag="memory.delete", kw_only=True):
    submission_id: SubmissionId
    key: MemoryKey


class MemoryClear(UiMessage, tag="memory.clear", kw_only=True):
    submission_id: SubmissionId


class MemoryEntry(Shape, kw_only=True):
    key: str
    value: str
    source: Literal["model", "user"]  # who wrote it last
    created_at: Epoch
    updated_at: Epoch


class MemoryState(UiMessage, tag="memory.state", kw_only=True):
    """The answer to `memory.list`, and sent to every page after any memory change."""

    submission_id: SubmissionId | None = None
    entries: list[MemoryEntry] = []
    max_entries: Count = 0
    max_value_chars: Count = 0
