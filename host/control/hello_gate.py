"""The door of a control connection: until a hello with the right token has been decoded, only
a small hello may arrive. Anything else is refused before any handler runs, and the peer
gets no error report (an unauthenticated peer learns nothing but a closed connection).

The gate works inside the endpoint's own decoding: `GatedSplitter` caps the bytes a peer may
send before its hello, and `GatedDecoder` checks the first message and its token as soon as
it is decoded, so a request pipelined behind a bad hello never reaches a method.
"""

from __future__ import annotations

from typing import Any, Callable

from protocol.control import ControlClientMessage, ControlHello
from protocol.errors import ErrorCode, ProtocolError
from protocol.framing import FrameSplitter, MessageDecoder
from protocol.limits import UI_OP_LIMITS

from host.control import refusals

# A hello is a few hundred bytes; this leaves room for a pipelined request or two.
MAX_BYTES_BEFORE_HELLO = 64 * 1024


class HelloGate:
    """Whether a connection has authenticated, and how to refuse it (once)."""

    def __init__(self, token_matches: Callable[[str], bool], refuse: Callable[[str, str], None]):
        self._token_matches = token_matches
        self._refuse = refuse
        self.open = False
        self.refused = False

    def refuse(self, code: str, detail: str) -> None:
        """Refuse the connection (the first call only counts)."""
        if self.open or self.refused:
            return
        self.refused = True
        self._refuse(code, detail)

    def admit(self, message: Any) -> bool:
        """Judge the first message; True opens the gate."""
        if not isinstance(message, ControlHello):
            self.refuse(refusals.NOT_HELLO_FIRST, f"first message was {type(message).__name__}, not a hello")
            return False
        if not self._token_matches(message.token):
            self.refuse(refusals.BAD_TOKEN, f"wrong token from client {message.client!r}")
            return False
        self.open = True
        return True


class GatedSplitter(FrameSplitter):
    """A frame splitter that refuses more than MAX_BYTES_BEFORE_HELLO before the gate opens."""

    def __init__(self, gate: HelloGate):
        super().__init__()
        self._gate = gate
        self._early = 0

    def feed(self, data: bytes) -> list[bytes]:
        if not self._gate.open:
            self._early += len(data)
            if self._early > MAX_BYTES_BEFORE_HELLO:
                self._gate.refuse(refusals.TOO_MUCH_BEFORE_HELLO,
                                  f"{self._early} bytes before a hello (at most {MAX_BYTES_BEFORE_HELLO})")
                raise ProtocolError(ErrorCode.FRAME_TOO_LARGE, "too much data before the hello", fatal=True)
        return super().feed(data)


class GatedDecoder(MessageDecoder):
    """A control-message decoder that admits nothing until the gate is open.

    Before that, a frame that does not decode, a chunk, or any message but a hello with the
    right token refuses the connection; that frame and every later one decode to None (dropped).
    """

    def __init__(self, gate: HelloGate):
        super().__init__(ControlClientMessage, UI_OP_LIMITS)
        self._gate = gate

    def decode(self, payload: bytes) -> Any:
        if self._gate.open:
            return super().decode(payload)
        if self._gate.refused:
            return None
        try:
            message = super().decode(payload)
        except ProtocolError as exc:
            self._gate.refuse(refusals.NOT_CONTROL_PROTOCOL, f"first frame is not a control message ({exc.code})")
            return None
        if message is None:  # a chunk: a hello is never chunked
            self._gate.refuse(refusals.NOT_CONTROL_PROTOCOL, "a chunked message before the hello")
            return None
        return message if self._gate.admit(message) else None
