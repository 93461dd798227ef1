"""Native-messaging framing: a 4-byte little-endian length, then UTF-8 JSON.

Host→browser frames never exceed MAX_HOST_FRAME; a larger message is split into `chunk`
frames that the receiver joins. The same chunking is accepted from the browser. Decoding
refuses, with a structured ProtocolError, anything that breaks the contract: a frame that is
too large, bad JSON, an unknown type, a bad field, nesting or sizes beyond the limits.
"""

from __future__ import annotations

import functools
import itertools
import re
import struct
from typing import Any, Callable, Iterable

import msgspec

from protocol import constants as C
from protocol.errors import ErrorCode, ProtocolError
from protocol.limits import BROWSER_LIMITS, Limits, check_value
from protocol.messages import Chunk, ExtensionMessage, HostMessage, Message, Result

_LEN = struct.Struct("<I")
PREFIX_SIZE = _LEN.size


def prefix(length: int) -> bytes:
    """The 4-byte little-endian length prefix."""
    return _LEN.pack(length)


class FrameEncoder:
    """Turns messages into ready-to-write frames, chunking those above `max_frame`."""

    def __init__(self, max_frame: int = C.MAX_HOST_FRAME, chunk_raw: int = C.CHUNK_RAW_BYTES,
                 max_message: int = C.MAX_CHUNKED_MESSAGE):
        self._encoder = msgspec.json.Encoder()
        self._max_frame = max_frame
        self._chunk_raw = chunk_raw
        self._max_message = max_message
        self._message_ids = itertools.count(1)

    def encode(self, message: Message) -> list[bytes]:
        """Frames (length prefix included) that carry `message`, in write order."""
        frame = bytearray(PREFIX_SIZE)
        self._encoder.encode_into(message, frame, PREFIX_SIZE)  # no copy to prepend the prefix
        length = len(frame) - PREFIX_SIZE
        if length <= self._max_frame:
            _LEN.pack_into(frame, 0, length)
            return [frame]
        return self.chunk(bytes(memoryview(frame)[PREFIX_SIZE:]))

    def chunk(self, body: bytes) -> list[bytes]:
        """Split an encoded message into chunk frames.

        Each chunk carries a slice of the message's JSON text, cut on a UTF-8 character
        boundary. Escaping can at most double a slice (every byte a quote or backslash), so a
        slice of `chunk_raw` bytes always fits one frame.
        """
        if len(body) > self._max_message:
            raise ProtocolError(
                ErrorCode.FRAME_TOO_LARGE,
                f"message of {len(body)} bytes exceeds the {self._max_message}-byte limit for chunked messages",
            )
        pieces = []
        start = 0
        while start < len(body):
            stop = min(start + self._chunk_raw, len(body))
            while stop < len(body) and (body[stop] & 0xC0) == 0x80:  # not inside a UTF-8 sequence
                stop -= 1
            pieces.append(body[start:stop].decode("utf-8"))
            start = stop
        message_id = next(self._message_ids)
        frames = []
        for index, data in enumerate(pieces):
            frame = self._encoder.encode(Chunk(message_id=message_id, index=index, count=len(pieces), data=data))
            frames.append(_LEN.pack(len(frame)) + frame)
        return frames


class FrameSplitter:
    """Incrementally cuts a byte stream into frame payloads.

    A length prefix above `max_frame` cannot come from a well-behaved peer, so the stream can no
    longer be trusted: that raises a fatal CORRUPT_STREAM error and the splitter stays broken.
    """

    def __init__(self, max_frame: int = C.MAX_BROWSER_FRAME):
        self._max_frame = max_frame
        self._buffer = bytearray()
        # Total bytes (prefix included) the buffered partial frame needs, once its prefix is in.
        self._need: int | None = None
        self._broken: ProtocolError | None = None

    @property
    def pending(self) -> int:
        """Bytes received but not yet returned as a whole frame."""
        return len(self._buffer)

    def feed(self, data: bytes) -> list[bytes]:
        """Add bytes; return every frame payload completed by them."""
        if self._broken:
            raise self._broken
        if self._buffer:
            # A partial frame is waiting: append (amortised O(1)) until it can complete.
            self._buffer += data
            if self._need is not None and len(self._buffer) < self._need:
                return []
            data = bytes(self._buffer)
            self._buffer = bytearray()
        frames = []
        pos, end = 0, len(data)
        while end - pos >= PREFIX_SIZE:
            (length,) = _LEN.unpack_from(data, pos)
            if length > self._max_frame:
                self._broken = ProtocolError(
                    ErrorCode.CORRUPT_STREAM,
                    f"frame length {length} exceeds the {self._max_frame}-byte limit; the stream is out of sync",
                    fatal=True,
                )
                raise self._broken
            stop = pos + PREFIX_SIZE + length
            if stop > end:
                break
            frames.append(data[pos + PREFIX_SIZE:stop])
            pos = stop
        self._need = None
        if pos < end:
            self._buffer = bytearray(data[pos:])
            if end - pos >= PREFIX_SIZE:
                self._need = PREFIX_SIZE + _LEN.unpack_from(data, pos)[0]
        return frames


# How both sides write a result (JSON.stringify and msgspec emit no spaces, `type` first):
# the request id is read from here to pick the typed decoder before decoding anything.
_RESULT_PREFIX = b'{"type":"result","id":'


@functools.lru_cache(maxsize=256)
def typed_result_decoder(kind: Any) -> msgspec.json.Decoder:
    """A decoder for a `result` whose value has type `kind` (a Result subclass)."""
    name = getattr(kind, "__name__", "Any")
    typed = msgspec.defstruct(f"Result_{name}", [("value", kind)], bases=(Result,), kw_only=True)
    return msgspec.json.Decoder(typed)


class _IdProbe(msgspec.Struct):
    id: Any = None


_probe = msgspec.json.Decoder(_IdProbe)


# Both sides write `type` then `id` first; this finds the id of a frame msgspec cannot parse
# (too deep to even skip) without trusting anything past the opening keys.
_LEADING_ID = re.compile(rb'^\s*\{\s*(?:"type"\s*:\s*"[^"\\]{0,64}"\s*,\s*)?"id"\s*:\s*(\d{1,16})\s*[,}]')


def _request_id_of(payload: bytes) -> int | None:
    try:
        found = _probe.decode(payload).id
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        match = _LEADING_ID.match(payload[:256])
        return int(match.group(1)) if match else None
    return found if type(found) is int and found >= 0 else None


class MessageDecoder:
    """Decodes frame payloads into typed messages, joining chunked ones.

    `decode()` returns a message, or None when the payload was a chunk of an unfinished message.
    """

    def __init__(self, union: Any = ExtensionMessage, limits: Limits = BROWSER_LIMITS,
                 max_message: int = C.MAX_CHUNKED_MESSAGE, max_partial: int = C.MAX_PARTIAL_MESSAGES):
        self._decoder = msgspec.json.Decoder(union)
        self.limits = limits
        # Set by the endpoint: the type a pending request expects for its result, so the
        # result is decoded once, straight into that type (see typed_result_decoder).
        self.result_kind: Callable[[int], Any] | None = None
        self._max_message = max_message
        self._max_partial = max_partial
        self._partial: dict[int, _Partial] = {}

    @property
    def buffered(self) -> int:
        """Bytes held by unfinished chunked messages."""
        return sum(p.size for p in self._partial.values())

    def decode(self, payload: bytes) -> Message | None:
        message = self._decode_one(payload)
        if isinstance(message, Chunk):
            body = self._absorb(message)
            if body is None:
                return None
            message = self._decode_one(body)
            if isinstance(message, Chunk):
                raise ProtocolError(ErrorCode.CHUNK_ERROR, "a chunked message may not contain another chunk")
        return message

    def _decode_one(self, payload: bytes) -> Message:
        if not payload:
            raise ProtocolError(ErrorCode.BAD_FRAME, "empty frame")
        decoder, kind = self._decoder, None
        if self.result_kind is not None and payload.startswith(_RESULT_PREFIX):
            start = len(_RESULT_PREFIX)
            comma = payload.find(b",", start, start + 17)
            if comma > start and payload[start:comma].isdigit():
                kind = self.result_kind(int(payload[start:comma]))
                if kind is not None:
                    decoder = typed_result_decoder(kind)
        try:
            message = decoder.decode(payload)
        except msgspec.ValidationError as exc:
            text = str(exc)
            code = ErrorCode.UNKNOWN_TYPE if "`$.type`" in text or "field `type`" in text else ErrorCode.INVALID_MESSAGE
            raise ProtocolError(code, text, _request_id_of(payload)) from None
        except msgspec.DecodeError as exc:
            raise ProtocolError(ErrorCode.BAD_FRAME, f"not valid UTF-8 JSON: {exc}") from None
        except RecursionError:
            raise ProtocolError(ErrorCode.TOO_DEEP, f"nesting deeper than {self.limits.max_depth}",
                                _request_id_of(payload)) from None
        if kind is None:
            check_value(message, self.limits, getattr(message, "id", None))
        elif kind is Any:
            check_value(message.value, self.limits, message.id, root="$.value")
        return message

    def _absorb(self, chunk: Chunk) -> bytes | None:
        partial = self._partial.get(chunk.message_id)
        if partial is None:
            if chunk.index != 0:
                raise ProtocolError(ErrorCode.CHUNK_ERROR, f"chunk {chunk.index} of unknown message {chunk.message_id}")
            if len(self._partial) >= self._max_partial:
                raise ProtocolError(ErrorCode.CHUNK_ERROR, f"more than {self._max_partial} chunked messages in flight")
            partial = self._partial[chunk.message_id] = _Partial(chunk.count)
        try:
            if chunk.count != partial.count or chunk.index != len(partial.parts):
                raise ProtocolError(
                    ErrorCode.CHUNK_ERROR,
                    f"chunk {chunk.index}/{chunk.count} of message {chunk.message_id} out of sequence",
                )
            data = chunk.data
            partial.parts.append(data)
            partial.size += len(data)
            if self.buffered > self._max_message:
                raise ProtocolError(ErrorCode.FRAME_TOO_LARGE, f"chunked message exceeds {self._max_message} bytes")
        except ProtocolError:
            del self._partial[chunk.message_id]
            raise
        if len(partial.parts) < partial.count:
            return None
        del self._partial[chunk.message_id]
        return "".join(partial.parts).encode("utf-8")


class _Partial:
    __slots__ = ("count", "parts", "size")

    def __init__(self, count: int):
        self.count = count
        self.parts: list[str] = []
        self.size = 0


def host_decoder() -> MessageDecoder:
    """A decoder for what the browser sends (used by the host)."""
    return MessageDecoder(ExtensionMessage, BROWSER_LIMITS)


def extension_decoder() -> MessageDecoder:
    """A decoder for what the host sends (used by tests and tools that play the browser)."""
    return MessageDecoder(HostMessage, BROWSER_LIMITS)


def browser_encoder() -> FrameEncoder:
    """An encoder with the browser→host limits (tests and doctor play the browser with it)."""
    return FrameEncoder(max_frame=C.MAX_BROWSER_FRAME)


def iter_frames(frames: Iterable[bytes]) -> bytes:
    """Concatenate frames for one write."""
    return b"".join(frames)


def decode_value(raw: msgspec.Raw | Any, kind: Any = Any, limits: Limits = BROWSER_LIMITS,
                 request_id: int | None = None) -> Any:
    """Decode a deferred value (a Result's payload) into `kind`.

    A concrete type is enforced by msgspec in C (sizes through its Meta bounds); `Any` gets a
    generic decode followed by the limit walk.
    """
    if not isinstance(raw, msgspec.Raw):  # a value built in this process (tests, local peers)
        raw = msgspec.Raw(msgspec.json.encode(raw))
    data = bytes(raw)
    try:
        value = msgspec.json.decode(data, type=kind)
    except msgspec.ValidationError as exc:
        raise ProtocolError(ErrorCode.INVALID_MESSAGE, f"result: {exc}", request_id) from None
    except msgspec.DecodeError as exc:
        raise ProtocolError(ErrorCode.BAD_FRAME, f"result is not valid JSON: {exc}", request_id) from None
    except RecursionError:
        raise ProtocolError(ErrorCode.TOO_DEEP, f"result nesting deeper than {limits.max_depth}", request_id) from None
    if kind is Any:
        check_value(value, limits, request_id, root="$.value")
    return value
