"""Server-Sent Events read from a byte stream, as the providers send them.

Our own reader rather than a library's, for two behaviours the model calls need: an event the
stream ends without its closing blank line is still delivered (a stream cut after its last
`data:` line otherwise loses `message_stop` or `[DONE]`), and comment lines (`: keep-alive`) are
told apart from events, so that only real content keeps a quiet stream alive.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

MAX_EVENT_BYTES = 16 * 1024 * 1024  # one event's data; a larger one is a broken stream


@dataclass(frozen=True, slots=True)
class Event:
    """One dispatched event: its type (`message` when none was named) and data lines joined."""

    event: str
    data: str
    id: str = ""


@dataclass(frozen=True, slots=True)
class Comment:
    """A comment line (`: …`): a sign of life that carries nothing."""

    text: str


class SseTooLarge(ValueError):
    """An event's data passed `MAX_EVENT_BYTES`."""


async def read_events(lines: AsyncIterator[str]) -> AsyncIterator[Event | Comment]:
    """The events and comments of a stream given as its decoded lines (without line endings).
    An event still open at the end of the stream is dispatched."""
    kind, data, size, last_id = "", [], 0, ""
    async for raw in lines:
        line = raw.rstrip("\r")
        if not line:
            if data:
                yield Event(kind or "message", "\n".join(data), last_id)
            kind, data, size = "", [], 0
            continue
        if line.startswith(":"):
            yield Comment(line[1:].strip())
            continue
        field, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if field == "data":
            size += len(value) + 1
            if size > MAX_EVENT_BYTES:
                raise SseTooLarge(f"an event of more than {MAX_EVENT_BYTES} bytes")
            data.append(value)
        elif field == "event":
            kind = value
        elif field == "id" and "\0" not in value:
            last_id = value
        # `retry` and unknown fields change nothing a model call needs.
    if data:
        yield Event(kind or "message", "\n".join(data), last_id)
