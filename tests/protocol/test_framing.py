"""Framing, chunking and decoding errors of the wire contract."""

from __future__ import annotations

import struct
from typing import Annotated

import msgspec
import pytest

from protocol import constants as C
from protocol.errors import ErrorCode, ProtocolError
from protocol.framing import (
    FrameEncoder, FrameSplitter, MessageDecoder, browser_encoder, decode_value, extension_decoder, host_decoder,
)
from protocol.limits import Limits
from protocol.messages import (
    BrowserCall, CdpCommand, Chunk, ContentCall, DiagCall, Failure, Hello, Ping, Result, UiOp,
)
from protocol.errors import ErrorInfo


def frame(payload: bytes) -> bytes:
    return struct.pack("<I", len(payload)) + payload


def same(a, b) -> bool:
    """Equal on the wire (decoded results keep their value as raw JSON)."""
    return msgspec.json.decode(msgspec.json.encode(a)) == msgspec.json.decode(msgspec.json.encode(b))


def decode_all(decoder: MessageDecoder, frames: list[bytes]):
    splitter = FrameSplitter()
    out = []
    for f in frames:
        for payload in splitter.feed(f):
            message = decoder.decode(payload)
            if message is not None:
                out.append(message)
    return out


@pytest.mark.parametrize("message", [
    ContentCall(id=1, tab_id=7, tool="read_page", params={"maxTokens": 100}),
    BrowserCall(id=2, api="tabs.query", args=[{}]),
    CdpCommand(id=3, tab_id=7, session_id="S", method="DOM.getDocument", params={"depth": -1}),
    DiagCall(id=4, op="digest", data="x" * 10),
    Ping(id=5),
])
def test_host_messages_round_trip(message):
    frames = FrameEncoder().encode(message)
    assert decode_all(extension_decoder(), frames) == [message]


def test_wire_names_are_camel_case_with_a_type_tag():
    raw = msgspec.json.decode(FrameEncoder().encode(ContentCall(id=1, tab_id=2, tool="click"))[0][4:])
    assert raw == {"type": "content.call", "id": 1, "tabId": 2, "tool": "click"}


@pytest.mark.parametrize("data", [
    "é" * (3 * 1024 * 1024),  # multi-byte UTF-8 cut between characters
    '"\\' * (1024 * 1024),  # the worst case for escaping: every byte doubles
    "🙂" * (600 * 1024),  # four-byte characters
])
def test_large_host_message_is_chunked_below_the_frame_limit(data):
    message = DiagCall(id=9, op="echo", data=data)
    frames = FrameEncoder().encode(message)
    assert len(frames) > 1
    assert all(len(f) - 4 <= C.MAX_HOST_FRAME for f in frames)
    assert decode_all(extension_decoder(), frames) == [message]


def test_chunks_from_the_browser_are_accepted_too():
    encoder = FrameEncoder(max_frame=1000, chunk_raw=300)
    message = Result(id=3, value={"text": "y" * 5000})
    frames = encoder.encode(message)
    assert len(frames) > 5
    (decoded,) = decode_all(host_decoder(), frames)
    assert same(decoded, message)
    assert decode_value(decoded.value) == {"text": "y" * 5000}


def test_encoder_refuses_a_message_beyond_the_chunked_limit():
    encoder = FrameEncoder(max_frame=100, chunk_raw=50, max_message=1000)
    with pytest.raises(ProtocolError) as err:
        encoder.encode(DiagCall(id=1, op="echo", data="z" * 2000))
    assert err.value.code == ErrorCode.FRAME_TOO_LARGE


def test_splitter_handles_frames_split_at_every_byte():
    frames = b"".join(FrameEncoder().encode(Ping(id=i))[0] for i in range(3))
    splitter = FrameSplitter()
    payloads = []
    for i in range(len(frames)):
        payloads += splitter.feed(frames[i:i + 1])
    assert [msgspec.json.decode(p)["id"] for p in payloads] == [0, 1, 2]


def test_oversized_length_prefix_breaks_the_stream_for_good():
    splitter = FrameSplitter(max_frame=1000)
    with pytest.raises(ProtocolError) as err:
        splitter.feed(struct.pack("<I", 1001) + b"{}")
    assert err.value.code == ErrorCode.CORRUPT_STREAM and err.value.fatal
    with pytest.raises(ProtocolError):
        splitter.feed(frame(b'{"type":"ping","id":1}'))


def code_of(decoder: MessageDecoder, payload: bytes) -> tuple[str, int | None]:
    with pytest.raises(ProtocolError) as err:
        decoder.decode(payload)
    assert not err.value.fatal
    return err.value.code, err.value.request_id


@pytest.mark.parametrize("payload, code, request_id", [
    (b"", ErrorCode.BAD_FRAME, None),
    (b"not json", ErrorCode.BAD_FRAME, None),
    (b"\xff\xfe", ErrorCode.BAD_FRAME, None),
    (b"[1,2]", ErrorCode.INVALID_MESSAGE, None),
    (b'{"id": 4}', ErrorCode.UNKNOWN_TYPE, 4),
    (b'{"type": "teleport", "id": 5}', ErrorCode.UNKNOWN_TYPE, 5),
    (b'{"type": 12, "id": 6}', ErrorCode.UNKNOWN_TYPE, 6),
    (b'{"type": "result"}', ErrorCode.INVALID_MESSAGE, None),
    (b'{"type": "failure", "id": 7, "error": {"code": "x"}}', ErrorCode.INVALID_MESSAGE, 7),
    (b'{"type": "result", "id": 8, "value": 1, "extra": 2}', ErrorCode.INVALID_MESSAGE, 8),
    (b'{"type": "result", "id": -1}', ErrorCode.INVALID_MESSAGE, None),
    (b'{"type": "ui.op", "clientId": "c", "op": {"v": ' + b"[" * 100 + b"]" * 100 + b"}}", ErrorCode.TOO_DEEP, None),
    (b'{"type": "result", "id": 10, "value": ' + b"[" * 5000 + b"]" * 5000 + b"}", ErrorCode.TOO_DEEP, 10),
])
def test_bad_frames_get_structured_errors(payload, code, request_id):
    assert code_of(host_decoder(), payload) == (code, request_id)


def test_host_only_types_are_refused_from_the_browser():
    payload = FrameEncoder().encode(ContentCall(id=1, tab_id=1, tool="click"))[0][4:]
    assert code_of(host_decoder(), payload)[0] == ErrorCode.UNKNOWN_TYPE


@pytest.mark.parametrize("value, code", [
    ("s" * 101, ErrorCode.STRING_TOO_LONG),
    (["a"] * 11, ErrorCode.ARRAY_TOO_LONG),
    ({str(i): i for i in range(11)}, ErrorCode.TOO_MANY_KEYS),
    ({"k" * 101: 1}, ErrorCode.STRING_TOO_LONG),
    ([[[[[[1]]]]]], ErrorCode.TOO_DEEP),
    ([[1] * 10] * 10, ErrorCode.TOO_MANY_NODES),
])
def test_limits_apply_inside_free_form_values(value, code):
    limits = Limits(max_depth=5, max_string=100, max_array=10, max_keys=10, max_nodes=60)
    decoder = MessageDecoder(limits=limits)
    payload = msgspec.json.encode(UiOp(client_id="c", op={"v": value}))
    assert code_of(decoder, payload)[0] == code
    # a result's value is checked when the request decodes it
    with pytest.raises(ProtocolError) as err:
        decode_value(msgspec.Raw(msgspec.json.encode([value])), limits=limits, request_id=3)
    assert (err.value.code, err.value.request_id) == (code, 3)


def test_typed_results_are_validated_by_their_type():
    class Snapshot(msgspec.Struct):
        text: Annotated[str, msgspec.Meta(max_length=5)]

    assert decode_value(msgspec.Raw(b'{"text": "abc"}'), Snapshot) == Snapshot("abc")
    with pytest.raises(ProtocolError) as err:
        decode_value(msgspec.Raw(b'{"text": "abcdef"}'), Snapshot, request_id=4)
    assert err.value.code == ErrorCode.INVALID_MESSAGE and "$.text" in err.value.message


def test_limit_errors_name_the_path():
    decoder = MessageDecoder(limits=Limits(max_string=4))
    with pytest.raises(ProtocolError) as err:
        decoder.decode(msgspec.json.encode(UiOp(client_id="c", op={"in": {"text": "longer"}})))
    assert "$.op.in.text" in err.value.message


def _chunk(message_id: int, index: int, count: int, data: bytes) -> bytes:
    return msgspec.json.encode(Chunk(message_id=message_id, index=index, count=count, data=data.decode()))


def test_chunk_sequence_errors_drop_only_that_message():
    decoder = host_decoder()
    body = msgspec.json.encode(Result(id=1, value="abc"))
    assert decoder.decode(_chunk(1, 0, 2, body[:5])) is None  # body: a result
    with pytest.raises(ProtocolError) as err:
        decoder.decode(_chunk(1, 2, 2, body[5:]))
    assert err.value.code == ErrorCode.CHUNK_ERROR
    assert decoder.buffered == 0
    # the link is still usable
    assert decoder.decode(msgspec.json.encode(Ping(id=3))) == Ping(id=3)


@pytest.mark.parametrize("payloads", [
    [_chunk(5, 1, 2, b"x")],  # a middle chunk of an unknown message
    [b'{"type":"chunk","messageId":1,"index":0,"count":2,"data":7}'],  # data is not text
    [_chunk(2, 0, 1, _chunk(3, 0, 1, b"{}"))],  # a chunk inside a chunk
    [_chunk(4, 0, 1, b"{not json")],
])
def test_malformed_chunks_are_refused(payloads):
    decoder = host_decoder()
    with pytest.raises(ProtocolError):
        for p in payloads:
            decoder.decode(p)


def test_partial_chunked_messages_are_bounded():
    decoder = MessageDecoder(max_partial=2, max_message=100)
    decoder.decode(_chunk(1, 0, 2, b"1"))
    decoder.decode(_chunk(2, 0, 2, b"2"))
    with pytest.raises(ProtocolError) as err:
        decoder.decode(_chunk(3, 0, 2, b"3"))
    assert err.value.code == ErrorCode.CHUNK_ERROR
    with pytest.raises(ProtocolError) as err:
        decoder.decode(_chunk(4 if False else 1, 1, 2, b"x" * 200))
    assert err.value.code == ErrorCode.FRAME_TOO_LARGE


def test_failure_round_trips_with_phase_and_details():
    failure = Failure(id=4, error=ErrorInfo(code="stale_ref", message="run read_page", phase="resolve", retryable=True, details={"ref": "s1_2_3"}))
    payload = browser_encoder().encode(failure)[0][4:]
    assert host_decoder().decode(payload) == failure


def test_hello_validates_its_fields():
    good = Hello(protocol="p", protocol_version=1, schema_hash="a" * 64, extension_version="1", browser_session_id="abcdefgh")
    assert host_decoder().decode(msgspec.json.encode(good)) == good
    bad = msgspec.json.decode(msgspec.json.encode(good))
    bad["browserSessionId"] = "no spaces allowed"
    assert code_of(host_decoder(), msgspec.json.encode(bad))[0] == ErrorCode.INVALID_MESSAGE
