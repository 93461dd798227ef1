"""Render `extension/generated/content-protocol.js` from `protocol.content`.

The output is a classic script (content scripts cannot import modules) that sets one frozen
global, `__tabwardenContent`: the message types, their fields with kinds and bounds, and the
check every listener runs. Only the field shapes the check can test exactly are accepted; any
other one fails here, at generation, instead of passing unchecked in the browser.
`python -m protocol.generate` writes and checks it beside protocol.js.
"""

from __future__ import annotations

import json
import re
from typing import Any, Union

import msgspec

from protocol.content import READ_PORT, TO_PAGE, TO_WORKER

GLOBAL_NAME = "__tabwardenContent"

# JSON Schema keywords each kind may carry, and their name in the generated table.
_BOUNDS = {
    "string": ("minLength", "maxLength"),
    "integer": ("minimum", "maximum"),
    "number": ("minimum", "maximum"),
    "boolean": (),
    "object": (),
    "any": (),
}

_CHECK = """\
  function fieldProblem(value, field) {
    switch (field.kind) {
      case "string":
        if (typeof value !== "string") return "must be a string";
        if (field.minLength !== undefined && value.length < field.minLength) {
          return field.minLength === 1 ? "must not be empty" : `must be at least ${field.minLength} characters long`;
        }
        if (field.maxLength !== undefined && value.length > field.maxLength) return `must be at most ${field.maxLength} characters long`;
        return null;
      case "integer":
      case "number":
        if (field.kind === "integer" ? !Number.isSafeInteger(value) : !Number.isFinite(value)) {
          return field.kind === "integer" ? "must be an integer" : "must be a number";
        }
        if (field.minimum !== undefined && value < field.minimum) return `must be at least ${field.minimum}`;
        if (field.maximum !== undefined && value > field.maximum) return `must be at most ${field.maximum}`;
        return null;
      case "boolean":
        return typeof value === "boolean" ? null : "must be true or false";
      case "object":
        return value !== null && typeof value === "object" && !Array.isArray(value) ? null : "must be an object";
      case "any":
        return null;
      case "enum":
        return field.values.includes(value) ? null : `must be one of ${field.values.map((v) => JSON.stringify(v)).join(", ")}`;
      default:
        return `has a kind this check does not know (${field.kind})`;
    }
  }

  // The declared type of `message`, or null when it names none.
  function typeOf(message) {
    const type = message !== null && typeof message === "object" ? message.type : undefined;
    return typeof type === "string" && Object.hasOwn(MESSAGES, type) ? type : null;
  }

  // Why `message` is not a valid content message, or null when it is.
  function problem(message) {
    if (message === null || typeof message !== "object" || Array.isArray(message)) return "a message must be an object";
    const type = typeOf(message);
    if (type === null) return "type" in message ? `unknown message type ${JSON.stringify(message.type)}` : "the message has no type";
    const fields = MESSAGES[type];
    for (const name of Object.keys(message)) {
      if (name !== "type" && !Object.hasOwn(fields, name)) return `${type}: unknown field ${name}`;
    }
    for (const [name, field] of Object.entries(fields)) {
      if (!Object.hasOwn(message, name)) {
        if (field.required) return `${type}: missing field ${name}`;
        continue;
      }
      const why = fieldProblem(message[name], field);
      if (why) return `${type}: ${name} ${why}`;
    }
    return null;
  }

  // A message to send, checked like a received one: a bad one is a bug in the sender.
  function message(type, fields = {}) {
    const built = { type, ...fields };
    const why = problem(built);
    if (why) throw new TypeError(why);
    return built;
  }

  function freeze(value) {
    if (value !== null && typeof value === "object") Object.values(value).forEach(freeze);
    return Object.freeze(value);
  }
"""


def _field(where: str, schema: dict[str, Any], required: bool) -> dict[str, Any]:
    if "enum" in schema and set(schema) <= {"enum", "default"}:
        return {"kind": "enum", "required": required, "values": schema["enum"]}
    if set(schema) <= {"default"}:  # msgspec's schema of Any
        return {"kind": "any", "required": required}
    kind = schema.get("type")
    if kind not in _BOUNDS:
        raise ValueError(f"{where}: the content check cannot test {schema}")
    extra = set(schema) - {"type", "default", *_BOUNDS[kind]}
    if extra:
        raise ValueError(f"{where}: the content check cannot test {sorted(extra)} of {schema}")
    field = {"kind": kind, "required": required}
    field.update({name: schema[name] for name in _BOUNDS[kind] if name in schema})
    return field


def messages() -> dict[str, dict[str, dict[str, Any]]]:
    """Every content message type → its fields (camelCase) → kind, `required` and bounds."""
    (schema,), defs = msgspec.json.schema_components([Union[TO_PAGE + TO_WORKER]])  # type: ignore[valid-type]
    out = {}
    for tag, ref in schema["discriminator"]["mapping"].items():
        body = defs[ref.rsplit("/", 1)[1]]
        required = set(body.get("required", []))
        out[tag] = {
            name: _field(f"{tag}.{name}", prop, name in required)
            for name, prop in body["properties"].items() if name != "type"
        }
    return out


def constant_name(tag: str) -> str:
    """`takeover.manualInput` → `TAKEOVER_MANUAL_INPUT`."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", tag).replace(".", "_").upper()


def render() -> str:
    """The text of content-protocol.js."""
    table = messages()
    types = {constant_name(tag): tag for tag in table}

    def js(value: Any) -> str:
        return json.dumps(value, indent=2, sort_keys=True).replace("\n", "\n  ")

    return "\n".join([
        "// Generated by `python -m protocol.generate` from protocol/content.py. Do not edit by hand;",
        "// tests/protocol/test_generated.py fails when this file is stale.",
        "//",
        "// The service worker <-> content script messages. A classic script: the worker injects it",
        "// before the page parts that use it, and protocol.js re-exports it to the worker as CONTENT.",
        f"globalThis.{GLOBAL_NAME} = (() => {{",
        '  "use strict";',
        f"  const TYPES = {js(types)};",
        "  // The port the worker keeps open to a document's executor for reads.",
        f"  const READ_PORT = {json.dumps(READ_PORT)};",
        "  // Per type, its fields: kind (string, integer, number, boolean, object, enum or any JSON",
        "  // value), whether it is required, and its bounds.",
        f"  const MESSAGES = {js(table)};",
        "",
        _CHECK,
        "  return freeze({ TYPES, READ_PORT, MESSAGES, typeOf, problem, message });",
        "})();",
        "",
    ])
