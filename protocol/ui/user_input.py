"""What the user submits with a turn: the text, the context blocks attached to it, the tabs the
page saw, and the per-turn overrides (model, policy, tool levels)."""

from __future__ import annotations

from typing import Annotated, Literal, Union

import msgspec

from protocol.tools import ToolLevel
from protocol.permissions import PolicyName
from protocol.ui.common import Label, Shape, TabRef, Text


class BrowserContext(Shape, kw_only=True):
    """The tabs the page saw when the user submitted: the default tab becomes the turn's target."""

    captured_at: Annotated[int, msgspec.Meta(ge=0)] = 0
    default_tab: TabRef | None = None
    referenced_tabs: Annotated[list[TabRef], msgspec.Meta(max_length=64)] = []


class _Part(msgspec.Struct, tag_field="type", rename="camel", omit_defaults=True, forbid_unknown_fields=True,
            kw_only=True):
    """One piece of a context block's content, tagged by `type`."""


class TextPart(_Part, tag="text", kw_only=True):
    text: Text


class ImagePart(_Part, tag="image", kw_only=True):
    mime: Literal["image/png", "image/jpeg", "image/webp", "image/gif"]
    data: Annotated[str, msgspec.Meta(max_length=16 * 1024 * 1024)]  # base64


ContentPart = Union[TextPart, ImagePart]


class ContextBlock(Shape, kw_only=True):
    """Context the user attached to a message (a page, a selection, a file...)."""

    kind: Literal["page", "selection", "screenshot", "tab", "mcp_resource", "file", "skill"]
    label: Label
    origin: Annotated[str, msgspec.Meta(max_length=2048)] | None = None
    trust: Literal["trusted", "untrusted"] | None = None
    provenance: Literal["user", "page", "mcp", "tool", "import", "plugin"] | None = None
    source_ref: Annotated[str, msgspec.Meta(max_length=2048)] | None = None
    tab: TabRef | None = None
    content: Annotated[list[ContentPart], msgspec.Meta(min_length=1, max_length=64)]


class UserInput(Shape, kw_only=True):
    text: Text
    attached_context: Annotated[list[ContextBlock], msgspec.Meta(max_length=32)] = []
    browser_context: BrowserContext | None = None


class ModelRef(Shape, kw_only=True):
    """A configured provider (`connection_id`) and optionally a model other than its default."""

    connection_id: Annotated[str, msgspec.Meta(min_length=1, max_length=128)]
    model_id: Annotated[str, msgspec.Meta(min_length=1, max_length=256)] | None = None


class TurnOverrides(Shape, kw_only=True):
    model: ModelRef | None = None
    permission_policy: PolicyName | None = None
    enabled_tool_levels: Annotated[list[ToolLevel], msgspec.Meta(max_length=5)] | None = None
