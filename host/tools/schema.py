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
    schema. Derived once per parameter type and shared: copy it before changing it."""
    if spec.params_type is None:
        return spec.input_schema or _NO_PARAMETERS
    return _struct_schema(spec.params_type)


_NO_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}


@functools.cache
def _struct_schema(kind: type) -> dict[str, Any]:
    (schema,), components = msgspec.json.schema_components([kind], ref_template="#/$defs/{name}")
    if "$ref" in schema:
        schema = dict(components.pop(schema["$ref"].rsplit("/", 1)[-1]))
    schema.pop("title", None)
    if components:
        schema["$defs"] = components
    return schema


def describe(spec: ToolSpec) -> dict[str, Any]:
    """A tool's declaration as JSON for people and tests (`tools.list`)."""
    return {
        "name": spec.name, "label": spec.label, "description": spec.description, "level": spec.level,
        "effects": spec.effects, "category": spec.category, "recovery": spec.recovery,
        "resultTrust": spec.result_trust, "parameters": provider_schema(spec),
    }
