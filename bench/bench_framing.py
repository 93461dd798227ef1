"""Framing throughput: our encode (frames, chunking above 1 MiB) + decode (split, typed decode,
limit checks, reassembly) next to raw msgspec.json encode + decode of the same objects.
Target: >= 0.8x raw msgspec."""

from __future__ import annotations

import gc

import msgspec

from bench.common import median, paired, table
from typing import Any

from protocol.framing import FrameEncoder, FrameSplitter, MessageDecoder
from protocol.messages import ExtensionMessage, Result

SIZES = {"1 KiB": 1 << 10, "64 KiB": 64 << 10, "1 MiB": 1 << 20, "8 MiB": 8 << 20}


def text_value(size: int) -> dict:
    """A page snapshot: one long string with quotes and newlines."""
    line = '  - button "Add to cart" [ref=s1k2j_4_17]\n'
    return {"text": (line * (size // len(line) + 1))[:size], "generation": 4}


def tree_value(size: int) -> dict:
    """An AX-tree-like result: many small objects."""
    node = {"nodeId": "1234", "role": {"type": "role", "value": "button"}, "name": {"type": "computedString", "value": "Add to cart"},
            "childIds": ["1235", "1236"], "backendDOMNodeId": 77}
    per = len(msgspec.json.encode(node)) + 1
    return {"nodes": [dict(node, nodeId=str(i)) for i in range(max(1, size // per))]}


class Link:
    """Both ends of one long-lived link, as the host and the extension hold them."""

    def __init__(self) -> None:
        self.encoder = FrameEncoder()  # host limits: 1 MiB frames, so 8 MiB goes out in chunks
        self.splitter = FrameSplitter()
        self.decoder = MessageDecoder(ExtensionMessage)


class SnapshotResult(msgspec.Struct):
    text: str
    generation: int


class AxValue(msgspec.Struct):
    type: str
    value: str


class AxNode(msgspec.Struct):
    nodeId: str  # noqa: N815 - CDP spelling
    role: AxValue
    name: AxValue
    childIds: list[str]  # noqa: N815
    backendDOMNodeId: int  # noqa: N815


class AxTree(msgspec.Struct):
    nodes: list[AxNode]


def ours(value: dict, link: "Link", kind: Any) -> None:
    frames = link.encoder.encode(Result(id=1, value=value))
    splitter, decoder = link.splitter, link.decoder
    decoder.result_kind = lambda request_id: kind  # what the endpoint does for a pending request
    done = None
    for frame in frames:
        for payload in splitter.feed(frame):
            done = decoder.decode(payload) or done
    assert not isinstance(done.value, msgspec.Raw)  # decoded once, into `kind`


def raw(value: dict) -> None:
    msgspec.json.decode(msgspec.json.encode({"type": "result", "id": 1, "value": value}))


def main() -> None:
    link = Link()
    rows = []
    cases = (("text", text_value, SnapshotResult), ("tree", tree_value, AxTree), ("tree, untyped", tree_value, Any))
    for name, make, kind in cases:
        for label, size in SIZES.items():
            value = make(size)
            n = max(5, min(2000, (64 << 20) // size))
            gc.collect()
            ours_s, raw_s = paired(lambda: ours(value, link, kind), lambda: raw(value), n)
            ours_t, raw_t = median(ours_s), median(raw_s)
            chunks = len(link.encoder.encode(Result(id=1, value=value)))
            rows.append((name, label, chunks, size / ours_t / 1e6, size / raw_t / 1e6, raw_t / ours_t))
    print("Framing encode+decode throughput (median per message; anchor: raw msgspec.json on the same object)")
    print("ours = frames (chunked above 1 MiB) + split + one decode into the type the request expects;")
    print("'untyped' decodes the value generically and walks it for the depth/size limits")
    print(table(("payload", "size", "frames", "ours MB/s", "raw MB/s", "ours/raw"), rows))
    worst = min(r[-1] for r in rows if "untyped" not in r[0])
    print(f"target >= 0.8x raw msgspec for typed results: {'met' if worst >= 0.8 else 'NOT met'} (worst {worst:.2f}x)")


if __name__ == "__main__":
    main()
