"""Tool declarations fitted to what one provider's API accepts.

Both APIs take a tool's parameters as a JSON Schema whose top level is an object; Anthropic's
refuses `allOf`/`anyOf`/`oneOf` there, and OpenAI's refuses more than 128 tools, or names
outside `[A-Za-z0-9_-]{1,64}`. MCP servers write schemas of every shape, so one server's tool
must never make every request fail: a top-level `$ref` is resolved, top-level combinators of
object schemas are merged into one object (what every form may carry; required only what all
require), a parameter with a default is optional (schemas generated from a validator's output
type list such parameters as required, though the server fills them in), and a tool that still
cannot be declared is left out with the reason, logged once.
Past the limit, the built-in tools are kept first, then the servers' in their order.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, replace
from typing import Any

from host.providers.model import ToolSchema

log = logging.getLogger("tabwarden.providers")

NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
LIMITS = {"openai": 128}
COMBINATORS = ("allOf", "anyOf", "oneOf")
_logged: set[tuple[str, str, str]] = set()


@dataclass(frozen=True)
class LeftOut:
    """A tool not offered to a provider, and why."""

    name: str
    reason: str


def fit_tools(tools: tuple[ToolSchema, ...], dialect: str, provider: str = "") -> tuple[list[ToolSchema], list[LeftOut]]:
    """The tools `dialect` ("openai" or "anthropic") can be sent, each with a schema it accepts,
    and the ones left out with their reasons (also logged, once per provider and tool)."""
    kept: list[ToolSchema] = []
    left: list[LeftOut] = []
    for tool in tools:
        if not NAME.match(tool.name):
            left.append(LeftOut(tool.name, "its name has characters or a length the model APIs refuse"))
            continue
        schema, problem = fit_schema(tool.parameters)
        if schema is None:
            left.append(LeftOut(tool.name, problem))
            continue
        kept.append(tool if schema is tool.parameters else replace(tool, parameters=schema))
    limit = LIMITS.get(dialect)
    if limit is not None and len(kept) > limit:
        ordered = sorted(kept, key=lambda t: t.name.startswith("mcp__"))  # stable: built-ins first
        cut = {t.name for t in ordered[limit:]}
        left.extend(LeftOut(name, f"over the provider's limit of {limit} tools") for name in (t.name for t in kept)
                    if name in cut)
        kept = [t for t in kept if t.name not in cut]
    for item in left:
        key = (provider, item.name, item.reason)
        if key not in _logged:
            _logged.add(key)
            log.warning("provider %s: tool %s is not offered: %s", provider or dialect, item.name, item.reason)
    return kept, left


def fit_schema(schema: Any) -> tuple[dict[str, Any] | None, str]:
    """`schema` with an object at its top level, or None and why that cannot be made."""
    if not isinstance(schema, dict):
        return None, "its input schema is not a JSON object"
    fitted = schema
    ref = fitted.get("$ref")
    if isinstance(ref, str):
        target = _resolve(fitted, ref)
        if target is None:
            return None, f"its input schema refers to {ref!r}, which it does not define"
        fitted = {**{k: v for k, v in fitted.items() if k != "$ref"}, **target}
    if any(k in fitted for k in COMBINATORS):
        merged = _merge_forms(fitted)
        if merged is None:
            return None, "its input schema's top level combines forms that are not all objects"
        fitted = merged
    kind = fitted.get("type", "object" if "properties" in fitted or not fitted else None)
    if kind != "object":
        return None, f"its input schema's top level is {kind!r}, not an object"
    if "type" not in fitted:
        fitted = {"type": "object", **fitted}
    return _defaults_optional(fitted), ""


def defaulted(schema: dict[str, Any]) -> set[str]:
    """The top-level properties of `schema` that have a default: optional to whoever calls."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return set()
    return {name for name, value in properties.items() if isinstance(value, dict) and "default" in value}


def _defaults_optional(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` without its defaulted properties among the required ones (unchanged otherwise)."""
    required = schema.get("required")
    optional = defaulted(schema)
    if not isinstance(required, list) or not optional.intersection(required):
        return schema
    kept = [name for name in required if name not in optional]
    out = {k: v for k, v in schema.items() if k != "required"}
    if kept:
        out["required"] = kept
    return out


def _resolve(schema: dict[str, Any], ref: str) -> dict[str, Any] | None:
    for prefix, store in (("#/$defs/", "$defs"), ("#/definitions/", "definitions")):
        if ref.startswith(prefix):
            found = (schema.get(store) or {}).get(ref[len(prefix):])
            return found if isinstance(found, dict) else None
    return None


def _merge_forms(schema: dict[str, Any]) -> dict[str, Any] | None:
    """One object schema for a top level of `allOf` (every part applies) and/or `anyOf`/`oneOf`
    (one form applies): all properties; required what the top level and every part of `allOf`
    require, and what every form of `anyOf`/`oneOf` requires."""
    out = {k: v for k, v in schema.items() if k not in COMBINATORS}
    properties = dict(out.get("properties") or {})
    required = set(out.get("required") or [])
    notes: list[str] = []
    for key in COMBINATORS:
        forms = schema.get(key)
        if forms is None:
            continue
        if not isinstance(forms, list) or not forms:
            return None
        resolved = []
        for form in forms:
            if isinstance(form, dict) and isinstance(form.get("$ref"), str):
                form = _resolve(schema, form["$ref"])
            if not isinstance(form, dict) or form.get("type", "object") != "object" or any(k in form for k in COMBINATORS):
                return None
            resolved.append(form)
        for form in resolved:
            for name, value in (form.get("properties") or {}).items():
                properties.setdefault(name, value)
        sets = [set(form.get("required") or []) for form in resolved]
        required |= set.union(*sets) if key == "allOf" else set.intersection(*sets)
        if key != "allOf":
            notes.append("one of these forms: " + "; ".join(
                ", ".join(sorted(form.get("required") or [])) or "(no required fields)" for form in resolved))
    out["type"] = "object"
    out["properties"] = properties
    if required:
        out["required"] = sorted(required)
    else:
        out.pop("required", None)
    if notes:
        described = out.get("description")
        out["description"] = ". ".join([*([described] if isinstance(described, str) and described else []),
                                        *(f"Requires {note}" for note in notes)])
    return out
