"""A small structural check of call parameters against a server tool's input schema: an
object, required keys present (but for those with a default, which the server fills in), no key outside the declared properties unless the schema opts in
(`additionalProperties` true or a schema, or `patternProperties`), and each top-level property of
the declared JSON type. The server validates fully; this catches the model's slips before the
user is asked to approve a call that cannot work, and keeps a call to what the user approved:
an argument the tool did not declare is refused, not passed on."""

from __future__ import annotations

import re
from typing import Any

from host.providers.tool_fit import defaulted
from host.tools.quoting import quoted

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")

_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,),
    "array": (list,), "object": (dict,), "null": (type(None),),
}


def _is(value: Any, kind: str) -> bool:
    expected = _TYPES.get(kind)
    if expected is None:
        return True  # an unknown type name: leave it to the server
    if isinstance(value, bool) and kind in ("integer", "number"):
        return False
    if kind == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, expected)


def problems(schema: dict[str, Any], params: Any) -> list[str]:
    """`<path>: <message>` for each problem found (empty: the parameters look right)."""
    if not isinstance(params, dict):
        return ["$: expected an object"]
    found = []
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    optional = defaulted(schema)
    for key in schema.get("required") or ():
        if isinstance(key, str) and key not in params and key not in optional:
            found.append(f"{path(key)}: required")
    if not opens_extra_keys(schema):
        found += [f"{path(key)}: unknown parameter (the tool declares {_declared(properties)})"
                  for key in params if key not in properties]
    for key, value in params.items():
        declared = properties.get(key)
        kind = declared.get("type") if isinstance(declared, dict) else None
        kinds = [kind] if isinstance(kind, str) else [k for k in kind if isinstance(k, str)] if isinstance(kind, list) else []
        # Only known type names get here: an unknown one is left to the server (`_is` passes it).
        if kinds and not any(_is(value, k) for k in kinds):
            found.append(f"{path(key)}: expected {' or '.join(kinds)}, got {_json_type(value)}")
    return found


def opens_extra_keys(schema: dict[str, Any]) -> bool:
    """Whether the schema accepts keys beyond its `properties`: only when it says so. JSON Schema
    allows them when `additionalProperties` is absent, but an undeclared argument is one the user
    never saw in the tool's definition."""
    extra = schema.get("additionalProperties")
    return extra is True or (isinstance(extra, dict) and extra != {"not": {}}) or bool(schema.get("patternProperties"))


def _declared(properties: dict[str, Any]) -> str:
    if not properties:
        return "no parameters"
    names = [path(k)[2:] if path(k).startswith("$.") else path(k)[1:-1] for k in list(properties)[:20]]
    return ", ".join(names) + (", …" if len(properties) > 20 else "")


def path(key: str) -> str:
    """The JSON path of a top-level key: `$.name` for a plain name, else `$["…"]` with the key
    quoted as data (the server chose the schema's keys, and this text is read unfenced)."""
    return f"$.{key}" if _NAME.fullmatch(key) else f"$[{quoted(key, 100)}]"


def _json_type(value: Any) -> str:
    for name, types in _TYPES.items():
        if name not in ("integer", "number") and isinstance(value, types):
            return name
    return "number" if isinstance(value, (int, float)) else type(value).__name__
