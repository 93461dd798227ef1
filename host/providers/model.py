"""The provider-neutral conversation and stream model the engine speaks.

The engine builds a `ModelRequest` from a thread's nodes; an adapter turns it into its API's
wire format, streams the answer back as `TextDelta` / `ReasoningDelta` / `ToolCallDelta`
events, and ends with one `Completion` holding the whole message.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Union

StopReason = Literal["end", "tool_use", "max_tokens", "content_filter", "refusal"]


@dataclass(frozen=True, slots=True)
class ToolSchema:
    """A tool as the model sees it: name, description, JSON Schema of the parameters."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Text:
    text: str


@dataclass(frozen=True, slots=True)
class Image:
    mime: str
    data: str  # base64


@dataclass(frozen=True, slots=True)
class Audio:
    """A sound a tool returned, for a provider that takes audio (WAV or MP3)."""

    mime: str
    data: str  # base64


@dataclass(frozen=True, slots=True)
class ToolCallPart:
    """A call the model made; `id` is the engine's stable id (the provider's is replaced).
    `echo`: what the provider that made it requires back with it (see `Completion`)."""

    id: str
    name: str
    arguments: dict[str, Any]
    echo: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class ToolResultPart:
    """A tool's answer; `images` go with it only to a provider that takes images, `audio` only
    to one that takes audio."""

    call_id: str
    text: str
    is_error: bool = False
    images: tuple[Image, ...] = ()
    audio: tuple[Audio, ...] = ()


Part = Union[Text, Image, ToolCallPart, ToolResultPart]


@dataclass(frozen=True, slots=True)
class Message:
    """One conversation message. Assistant messages hold Text and ToolCallPart parts; user messages
    hold Text, Image and ToolResultPart parts (adapters split or merge them as their API wants)."""

    role: Literal["user", "assistant"]
    parts: tuple[Part, ...]
    echo: dict[str, Any] | None = None  # an assistant message's round-trip data (see `Completion`)


@dataclass(frozen=True, slots=True)
class ModelRequest:
    model: str
    system: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSchema, ...] = ()
    max_tokens: int = 4096


@dataclass(frozen=True, slots=True)
class Usage:
    input: int = 0
    output: int = 0
    cache_read: int | None = None
    cache_write: int | None = None


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """Progress on the `index`-th tool call of the message (name known, arguments growing)."""

    index: int
    name: str
    arguments_chars: int


@dataclass(frozen=True, slots=True)
class ProviderCall:
    """A tool call as the provider sent it (its own id, arguments as raw JSON text)."""

    provider_id: str
    name: str
    arguments: str
    echo: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Completion:
    """The whole answer: text, tool calls in order, why it stopped, tokens used.

    `echo` (on the message and on each call) is what the provider requires to get back, as it
    sent it, when the conversation continues: DeepSeek's `reasoning_content` beside tool calls,
    Gemini's thought signatures on its calls, Anthropic's signed thinking blocks. It is stored
    with the message, opaque to everything but the adapter of the same kind, and sent back only
    to that provider."""

    text: str
    tool_calls: tuple[ProviderCall, ...]
    stop_reason: StopReason
    usage: Usage = field(default_factory=Usage)
    reasoning: str = ""
    echo: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class RetryWait:
    """The call waits `seconds` before trying again (the provider's own figure when it gave one)."""

    seconds: float
    reason: str  # rate limited, overloaded, server error, could not be reached, timed out
    attempt: int  # the attempt that follows the wait


StreamEvent = Union[TextDelta, ReasoningDelta, ToolCallDelta, RetryWait, Completion]
