"""Size limits for decoded JSON, checked before any handler sees the data.

msgspec enforces the typed parts of a message (and refuses pathological nesting itself with a
RecursionError); the free-form parts (`Any` fields such as tool params or CDP results) are walked
here once, iteratively, so a hostile or broken peer cannot make the host recurse, allocate or
loop without bound.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec

from protocol.errors import ErrorCode, ProtocolError


@dataclass(frozen=True)
class Limits:
    max_depth: int = 64
    max_string: int = 64 * 1024 * 1024  # UTF-8 bytes of the encoded form, code points after decode
    max_array: int = 100_000
    max_keys: int = 16_384
    max_nodes: int = 2_000_000

    def as_dict(self) -> dict[str, int]:
        return {
            "maxDepth": self.max_depth,
            "maxString": self.max_string,
            "maxArray": self.max_array,
            "maxKeys": self.max_keys,
            "maxNodes": self.max_nodes,
        }


# What the browser may send to the host in one message.
BROWSER_LIMITS = Limits()
# What a UI op (from an extension page) may carry; tighter, since a person typed it.
UI_OP_LIMITS = Limits(max_depth=64, max_string=32 * 1024 * 1024, max_array=8_192, max_keys=8_192, max_nodes=25_000)


def _fail(code: str, message: str, path: str, request_id: int | None) -> ProtocolError:
    return ProtocolError(code, f"{message} - at `{path}`", request_id)


def check_value(value: Any, limits: Limits, request_id: int | None = None, root: str = "$") -> None:
    """Raise ProtocolError if `value` (decoded JSON or a Struct) breaks `limits`."""
    max_string = limits.max_string
    nodes = 0
    # (container, depth, where): `where` is a linked (parent, key) chain, turned into a
    # readable path only when an error is reported.
    stack: list[tuple[Any, int, tuple]] = [(value, 0, (root,))]
    while stack:
        item, depth, where = stack.pop()
        if depth > limits.max_depth:
            raise _fail(ErrorCode.TOO_DEEP, f"nesting deeper than {limits.max_depth}", _path(where), request_id)
        if type(item) is dict:
            if len(item) > limits.max_keys:
                raise _fail(ErrorCode.TOO_MANY_KEYS, f"object with more than {limits.max_keys} keys", _path(where), request_id)
            if item and max(map(len, item)) > max_string:
                raise _fail(ErrorCode.STRING_TOO_LONG, "object key too long", _path(where), request_id)
            pairs = item.items()
            nodes += len(item)
        elif type(item) is list:
            if len(item) > limits.max_array:
                raise _fail(ErrorCode.ARRAY_TOO_LONG, f"array longer than {limits.max_array}", _path(where), request_id)
            pairs = enumerate(item)
            nodes += len(item)
        elif isinstance(item, msgspec.Struct):
            pairs = ((name, getattr(item, name)) for name in item.__struct_fields__)
        elif type(item) is str:
            if len(item) > max_string:
                raise _fail(ErrorCode.STRING_TOO_LONG, f"string longer than {max_string}", _path(where), request_id)
            continue
        else:
            continue
        if nodes > limits.max_nodes:
            raise _fail(ErrorCode.TOO_MANY_NODES, f"more than {limits.max_nodes} values", _path(where), request_id)
        for key, child in pairs:
            kind = type(child)
            if kind is str:
                if len(child) > max_string:
                    raise _fail(ErrorCode.STRING_TOO_LONG, f"string longer than {max_string}", _path((where, key)), request_id)
            elif kind is dict or kind is list or isinstance(child, msgspec.Struct):
                stack.append((child, depth + 1, (where, key)))


def _path(where: tuple) -> str:
    parts: list[str] = []
    while len(where) == 2:
        where, key = where
        parts.append(f"[{key}]" if isinstance(key, int) else f".{key}")
    parts.append(where[0])
    return "".join(reversed(parts))
