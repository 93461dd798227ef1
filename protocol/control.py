"""Messages between a control client (REPL, tests, `launch`) and a running host.

The control link uses the same framing and the same Result/Failure replies as the browser
link; only the opening (a token hello) and the request/event envelopes differ.
"""

from __future__ import annotations

from typing import Annotated, Any, Union

import msgspec

from protocol.messages import Cancel, Failure, Message, Name, Ping, Pong, ProtocolErrorReport, RequestId, Result


class ControlHello(Message, tag="control.hello", kw_only=True):
    token: Annotated[str, msgspec.Meta(min_length=16, max_length=256)]
    client: Annotated[str, msgspec.Meta(max_length=128)] = ""


class ControlWelcome(Message, tag="control.welcome", kw_only=True):
    host_version: Name
    pid: int
    extension_id: str
    browser_session_id: str | None = None


class ControlRequest(Message, tag="control.request", kw_only=True):
    id: RequestId
    method: Annotated[str, msgspec.Meta(pattern=r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$", max_length=128)]
    params: dict[str, Any] = {}
    timeout_ms: Annotated[int, msgspec.Meta(ge=0, le=3_600_000)] = 60_000


class ControlEvent(Message, tag="control.event", kw_only=True):
    topic: Name
    data: Any = None


ControlClientMessage = Union[ControlHello, ControlRequest, Cancel, Ping, Pong, ProtocolErrorReport]
"""What a control client may send to the host."""

ControlServerMessage = Union[ControlWelcome, Result, Failure, ControlEvent, Ping, Pong, ProtocolErrorReport]
"""What the host sends to a control client."""
