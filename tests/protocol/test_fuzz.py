"""Random and truncated frames never crash or hang the decoder (hypothesis)."""

from __future__ import annotations

import struct

import msgspec
from hypothesis import HealthCheck, given, settings, strategies as st

from protocol.errors import ProtocolError
from protocol.framing import FrameSplitter
from protocol.limits import Limits
from protocol.framing import MessageDecoder
from protocol.messages import Chunk, Hello, Result, UiOp

SETTINGS = settings(max_examples=10_000, deadline=None, suppress_health_check=[HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)

valid_payloads = st.one_of(
    st.builds(lambda i, v: msgspec.json.encode(Result(id=i, value=v)), st.integers(0, 2**53 - 1), json_values),
    st.builds(lambda c, o: msgspec.json.encode(UiOp(client_id=c, op=o)), st.text(min_size=1, max_size=10),
              st.dictionaries(st.text(max_size=5), json_values, max_size=3)),
    st.just(msgspec.json.encode(Hello(protocol="p", protocol_version=1, schema_hash="a" * 64,
                                      extension_version="1", browser_session_id="abcdefgh"))),
    st.builds(lambda i, n, d: msgspec.json.encode(Chunk(message_id=i, index=n, count=n + 1, data=d)),
              st.integers(0, 5), st.integers(0, 3), st.text(max_size=12)),
)


def feed(data: bytes) -> int:
    """Run bytes through splitter and decoder; count messages; only ProtocolError may escape."""
    splitter = FrameSplitter(max_frame=1 << 16)
    decoder = MessageDecoder(limits=Limits(max_depth=8, max_string=64, max_array=8, max_keys=8, max_nodes=100))
    seen = 0
    try:
        payloads = splitter.feed(data)
    except ProtocolError as exc:
        assert exc.fatal
        return -1
    for payload in payloads:
        try:
            if decoder.decode(payload) is not None:
                seen += 1
        except ProtocolError as exc:
            assert exc.code and exc.message and not exc.fatal
    return seen


@SETTINGS
@given(st.binary(max_size=200))
def test_random_bytes(data):
    feed(data)


@SETTINGS
@given(st.lists(valid_payloads, min_size=1, max_size=4), st.data())
def test_truncated_and_corrupted_streams(payloads, data):
    stream = b"".join(struct.pack("<I", len(p)) + p for p in payloads)
    cut = data.draw(st.integers(0, len(stream)))
    flip = data.draw(st.integers(0, len(stream)))
    mutated = bytearray(stream[:cut])
    if flip < len(mutated):
        mutated[flip] ^= data.draw(st.integers(1, 255))
    feed(bytes(mutated))


@settings(max_examples=2_000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(valid_payloads, min_size=1, max_size=4))
def test_intact_streams_decode_every_whole_message(payloads):
    stream = b"".join(struct.pack("<I", len(p)) + p for p in payloads)
    assert feed(stream) >= 0

