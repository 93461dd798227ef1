"""What every topic of the UI catalogue shares: bounded ids and texts, the two base classes,
the stream cursor and the tab reference."""

from __future__ import annotations

from typing import Annotated

import msgspec

SubmissionId = Annotated[str, msgspec.Meta(min_length=1, max_length=128)]
Id = Annotated[str, msgspec.Meta(min_length=1, max_length=512)]
Text = Annotated[str, msgspec.Meta(max_length=1_000_000)]
Label = Annotated[str, msgspec.Meta(max_length=500)]
Note = Annotated[str, msgspec.Meta(max_length=4000)]
Count = Annotated[int, msgspec.Meta(ge=0)]
Epoch = Annotated[float, msgspec.Meta(ge=0)]


class UiMessage(msgspec.Struct, tag_field="type", rename="camel", omit_defaults=True, forbid_unknown_fields=True,
                kw_only=True):
    """Base of every op and event: its `type` tag names it on the wire."""


class Shape(msgspec.Struct, rename="camel", omit_defaults=True, forbid_unknown_fields=True, kw_only=True):
    """A nested shape (no `type` tag)."""


class TabRef(Shape, kw_only=True):
    tab_id: Annotated[int, msgspec.Meta(ge=0, le=2**31 - 1)]
    url: Annotated[str, msgspec.Meta(max_length=8192)] = ""
    title: Annotated[str, msgspec.Meta(max_length=1000)] = ""


class StreamCursor(Shape, kw_only=True):
    thread_id: Id
    epoch: Annotated[int, msgspec.Meta(ge=1)]
    sequence: Annotated[int, msgspec.Meta(ge=1)]


def tag_of(cls: type) -> str:
    """The tag of a tagged Struct class: the `type` of an op or event, the `kind` of a decision."""
    return cls.__struct_config__.tag  # type: ignore[attr-defined,no-any-return]
