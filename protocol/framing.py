"""Native-messaging framing: a 4-byte little-endian length, then UTF-8 JSON.

Host→browser frames never exceed MAX_HOST_FRAME; a larger message is split into `chunk`
frames that the receiver joins. The same chunking is accepted from the browser. Decoding
refuses, with a structured ProtocolError, anything that breaks the contract: a frame that is
too large, bad JSON, an unknown type, a bad field, nesting or sizes beyond the limits.
"""

from __future__ import annotations

import binascii
import itertools
import re
import struct
from typing import Any, Iterable

import msgspec

from protocol import constants as C
from protocol.errors import ErrorCode, ProtocolError
from protocol.limits import BROWSER_LIMITS, Limits, check_value
from protocol.messages import Chunk, ExtensionMessage, HostMessage, Message

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
        body = self._encoder.encode(message)
        if len(body) <= self._max_frame:
            return [_LEN.pack(len(body)) + body]
        return self.chunk(body)

    def chunk(self, body: bytes) -> list[bytes]:
        """Split an encoded message into chunk frames."""
        if len(body) > self._max_message:
            raise ProtocolError(
                ErrorCode.FRAME_TOO_LARGE,
                f"message of {len(body)} bytes exceeds the {self._max_message}-byte limit for chunked messages",
            )
        step = self._chunk_raw
        count = -(-len(body) // step)
        message_id = next(self._message_ids)
        view = memoryview(body)
        frames = []
        for index in range(count):
            data = binascii.b2a_base64(view[index * step:(index + 1) * step], newline=False).decode("ascii")
            frame = self._encoder.encode(Chunk(message_id=message_id, index=index, count=count, data=data))
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
        self._buffer += data
        frames = []
        while True:
            if self._need is None:
                if len(self._buffer) < PREFIX_SIZE:
                    return frames
                (length,) = _LEN.unpack_from(self._buffer)
                if length > self._max_frame:
                    self._broken = ProtocolError(
                        ErrorCode.CORRUPT_STREAM,
                        f"frame length {length} exceeds the {self._max_frame}-byte limit; the stream is out of sync",
                        fatal=True,
                    )
                    raise self._broken
                del self._buffer[:PREFIX_SIZE]
                self._need = length
            if len(self._buffer) < self._need:
                return frames
            frames.append(bytes(self._buffer[: self._need]))
            del self._buffer[: self._need]
            self._need = None


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
        self._limits = limits
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
        try:
            message = self._decoder.decode(payload)
        except msgspec.ValidationError as exc:
            text = str(exc)
            code = ErrorCode.UNKNOWN_TYPE if "`$.type`" in text or "field `type`" in text else ErrorCode.INVALID_MESSAGE
            raise ProtocolError(code, text, _request_id_of(payload)) from None
        except msgspec.DecodeError as exc:
            raise ProtocolError(ErrorCode.BAD_FRAME, f"not valid UTF-8 JSON: {exc}") from None
        except RecursionError:
            raise ProtocolError(ErrorCode.TOO_DEEP, f"nesting deeper than {self._limits.max_depth}",
                                _request_id_of(payload)) from None
        check_value(message, self._limits, getattr(message, "id", None))
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
            try:
                data = binascii.a2b_base64(chunk.data, strict_mode=True)
            except (binascii.Error, ValueError):
                raise ProtocolError(ErrorCode.CHUNK_ERROR, "chunk data is not valid base64") from None
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
        return b"".join(partial.parts)


class _Partial:
    __slots__ = ("count", "parts", "size")

    def __init__(self, count: int):
        self.count = count
        self.parts: list[bytes] = []
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
