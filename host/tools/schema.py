"""The JSON Schema of a tool's parameters, derived once from its declaration.

Model providers get it (both API adapters send the same dict), `tools.list` shows it, and the
extension's generated copy of the page tools' checks is derived from the same Structs.
"""

from __future__ import annotations

import functools
from typing import Any

import msgspec

from host.tools.spec import ToolSpec


def provider_schema(spec: ToolSpec) -> dict[str, Any]:
    """The parameters' JSON Schema as a model provider gets it: an inline object schema (with
    `$defs` when a parameter has a named type), without titles. MCP tools give their server's
    schema."""
    if spec.params_type is None:
        return dict(spec.input_schema or {"type": "object", "properties": {}})
    return msgspec.json.decode(_struct_schema(spec.params_type))  # a fresh copy: callers may change it


@functools.cache
def _struct_schema(kind: type) -> bytes:
    (schema,), components = msgspec.json.schema_components([kind], ref_template="#/$defs/{name}")
    if "$ref" in schema:
        schema = dict(components.pop(schema["$ref"].rsplit("/", 1)[-1]))
    schema.pop("title", None)
    if components:
        schema["$defs"] = components
    return msgspec.json.encode(schema)


def describe(spec: ToolSpec) -> dict[str, Any]:
    """A tool's declaration as JSON for people and tests (`tools.list`)."""
    return {
        "name": spec.name, "label": spec.label, "description": spec.description, "level": spec.level,
        "effects": spec.effects, "category": spec.category, "recovery": spec.recovery,
        "resultTrust": spec.result_trust, "parameters": provider_schema(spec),
    }
