"""Parameter types of the built-in and interaction tools, as msgspec Structs.

The catalog hangs each on its tool's `ToolSpec.params_type`; `decode` validates a model's
arguments against it and `provider_schema` derives the JSON Schema the model is given, so the
bounds live in one place. Names are camelCase on the wire, like the browser tools'.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

import msgspec

Url = Annotated[str, msgspec.Meta(min_length=1, max_length=8192, description="An absolute http(s) URL.")]
TabId = Annotated[int, msgspec.Meta(ge=0, le=2**31 - 1,
                                    description="A tab id from tabs_list; defaults to the task's tab.")]
MemoryKey = Annotated[str, msgspec.Meta(min_length=1, max_length=100, pattern=r"^[^\x00-\x1f]+$",
                                        description="A short name for the memory, e.g. 'preferred-airline'.")]
FileName = Annotated[str, msgspec.Meta(
    min_length=1, max_length=120, pattern=r"^[A-Za-z0-9][A-Za-z0-9 ._()-]*$",
    description="A plain file name with an extension (no folders), e.g. 'report.md'.")]
SearchText = Annotated[str, msgspec.Meta(min_length=1, max_length=1000)]
Option = Annotated[str, msgspec.Meta(min_length=1, max_length=200)]


class Params(msgspec.Struct, forbid_unknown_fields=True, rename="camel", kw_only=True, omit_defaults=True):
    """Base of every built-in tool's parameters."""


# ---------------------------------------------------------------- built-ins


class FetchUrlParams(Params, kw_only=True):
    url: Url
    from_char: Annotated[int, msgspec.Meta(ge=0, le=10_000_000, description=(
        "Where the returned text starts, to page through a long document (the previous result names "
        "the next value)."))] = 0
    format: Annotated[Literal["markdown", "text"], msgspec.Meta(
        description="markdown keeps headings, lists and links; text is plain.")] = "markdown"


class DownloadParams(Params, kw_only=True):
    url: Url
    filename: FileName | None = None


class MemoryReadParams(Params, kw_only=True):
    key: MemoryKey | None = None
    query: Annotated[str, msgspec.Meta(min_length=1, max_length=200, description=(
        "Only memories whose key or value contains this text (case-insensitive)."))] | None = None


class MemoryWriteParams(Params, kw_only=True):
    key: MemoryKey
    value: Annotated[str, msgspec.Meta(max_length=4000, description=(
        "What to remember; null forgets the key."))] | None


class ArtifactParams(Params, kw_only=True):
    name: FileName
    content: Annotated[str, msgspec.Meta(max_length=1_000_000, description="The whole file, as UTF-8 text.")]


# ---------------------------------------------------------------- interactions


class AskUserParams(Params, kw_only=True):
    question: Annotated[str, msgspec.Meta(min_length=1, max_length=2000,
                                          description="What you need to know, as you would ask a person.")]
    options: Annotated[list[Option], msgspec.Meta(
        max_length=10, description="Answers to choose from, if the question has a few obvious ones.")] = []


class RequestUserActionParams(Params, kw_only=True):
    action: Annotated[str, msgspec.Meta(min_length=1, max_length=1000, description=(
        "What the user should do, e.g. 'Log in to shop.example in tab 12'."))]
    reason: Annotated[str, msgspec.Meta(max_length=1000, description="Why you cannot do it yourself.")] | None = None
    tab_id: TabId | None = None
    timeout_seconds: Annotated[int, msgspec.Meta(ge=60, le=86_400, description=(
        "How long to wait for the user (default: 30 minutes)."))] | None = None


class WatchPageParams(Params, kw_only=True):
    tab_id: TabId | None = None
    text_appears: Annotated[SearchText, msgspec.Meta(description="Wait until the page shows this text.")] | None = None
    text_gone: Annotated[SearchText, msgspec.Meta(description="Wait until this text is no longer on the page.")] \
        | None = None
    url_matches: Annotated[str, msgspec.Meta(min_length=1, max_length=2000, description=(
        "Wait until the tab's full URL matches this pattern; * matches any run of characters, "
        "e.g. 'https://shop.example/orders/*'."))] | None = None
    timeout_seconds: Annotated[int, msgspec.Meta(ge=1, le=86_400, description="Give up after this many seconds.")] = 300
    note: Annotated[str, msgspec.Meta(max_length=500, description="What you are waiting for, shown to the user.")] \
        | None = None

    def __post_init__(self) -> None:
        if self.text_appears is None and self.text_gone is None and self.url_matches is None:
            raise ValueError("give at least one condition: textAppears, textGone or urlMatches")


class ScheduleResumeParams(Params, kw_only=True):
    delay_seconds: Annotated[int, msgspec.Meta(ge=1, le=7 * 86_400, description=(
        "Continue the task after this many seconds (at most 7 days)."))]
    reason: Annotated[str, msgspec.Meta(min_length=1, max_length=1000,
                                        description="Why the task waits, shown to the user.")]


class InvalidParams(ValueError):
    """Arguments that do not fit a tool's parameters; the message names the bad field."""


def decode(kind: type[Params], raw: Any, tool: str) -> Params:
    """Validate `raw` (decoded JSON) as `kind`; raise InvalidParams with `Invalid parameters for
    <tool>: <problem> - at $.<path>` otherwise."""
    if not isinstance(raw, dict):
        raise InvalidParams(f"Invalid parameters for {tool}: expected an object, got {type(raw).__name__}")
    try:
        return msgspec.convert(raw, kind)
    except (msgspec.ValidationError, ValueError) as exc:
        raise InvalidParams(f"Invalid parameters for {tool}: {exc}") from None


def provider_schema(kind: type[Params]) -> dict[str, Any]:
    """The JSON Schema a model provider gets for `kind` (inline object, `$defs` if any)."""
    (schema,), components = msgspec.json.schema_components([kind], ref_template="#/$defs/{name}")
    if "$ref" in schema:
        schema = dict(components.pop(schema["$ref"].rsplit("/", 1)[-1]))
    schema.pop("title", None)
    if components:
        schema["$defs"] = components
    return schema


_STAR = re.compile(r"\*+")


def url_pattern(pattern: str) -> re.Pattern[str]:
    """The regular expression of a `urlMatches` pattern: `*` matches any run, the rest literally,
    anchored at both ends."""
    return re.compile("^" + ".*".join(re.escape(part) for part in _STAR.split(pattern)) + "$", re.DOTALL)
