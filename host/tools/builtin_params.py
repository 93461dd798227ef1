"""Parameter types of the built-in and interaction tools, as msgspec Structs.

Each is the `params_type` of its tool's declaration in `host.tools.catalog`.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from host.tools.params import Params, Rule, SearchText, TabId, Url

MemoryKey = Annotated[str, msgspec.Meta(min_length=1, max_length=100, pattern=r"^[^\x00-\x1f]+$",
                                        description="A short name for the memory, e.g. 'preferred-airline'.")]
FileName = Annotated[str, msgspec.Meta(
    min_length=1, max_length=120, pattern=r"^[A-Za-z0-9][A-Za-z0-9 ._()-]*$",
    description="A plain file name with an extension (no folders), e.g. 'report.md'.")]
Option = Annotated[str, msgspec.Meta(min_length=1, max_length=200)]


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


class LoadSkillParams(Params, kw_only=True):
    name: Annotated[str, msgspec.Meta(min_length=1, max_length=64, pattern=r"^[a-z0-9-]+$", description=(
        "The skill's name as the Skills list gives it."))]
    resource: Annotated[str, msgspec.Meta(min_length=1, max_length=300, description=(
        "A file of the skill under references/ or assets/ (e.g. 'references/forms.md'); omit it for the "
        "skill's instructions."))] | None = None


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

    rules = (Rule("at_least_one", ("textAppears", "textGone", "urlMatches"),
                  "give at least one condition: textAppears, textGone or urlMatches"),)


class ScheduleResumeParams(Params, kw_only=True):
    delay_seconds: Annotated[int, msgspec.Meta(ge=1, le=7 * 86_400, description=(
        "Continue the task after this many seconds (at most 7 days)."))]
    reason: Annotated[str, msgspec.Meta(min_length=1, max_length=1000,
                                        description="Why the task waits, shown to the user.")]
