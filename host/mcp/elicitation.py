"""An MCP server's question to the user (elicitation, form mode), put through the running call's
asker (host/tools/asking.py) as a card on the side panel, and the answer the server gets.

The server's `requestedSchema` is flat by the spec: each property a string (optionally one of an
enum, with display names), a number, an integer or a boolean. The card is built from the fields
read here; a schema with anything else is declined without asking. The user's answer is checked
against the fields again here, whatever the page sent: a value of the wrong type, outside an
enum or a required one missing ends the question as `cancel` (the server asked nothing it can
use). The time the user takes does not count against the call's timeout (the call's clock stops
while the card waits: `ProgressLine.hold`), up to the question's own limit."""

from __future__ import annotations

import asyncio
import logging
import math
from typing import Any

from host.mcp.progress import clock_stopped
from host.tools.asking import Asker

log = logging.getLogger("tabwarden.mcp")

MAX_FIELDS = 20
MAX_MESSAGE = 2000
MAX_TEXT = 200
MAX_VALUE = 2000
QUESTION_TIMEOUT_S = 300.0
_TYPES = ("string", "number", "integer", "boolean")


def fields_of(schema: Any) -> list[dict[str, Any]] | None:
    """The form's fields from a `requestedSchema`, or None when it holds what a flat form cannot."""
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        return None
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not properties or len(properties) > MAX_FIELDS:
        return None
    required = set(schema.get("required") or ())
    fields = []
    for name, spec in properties.items():
        if not isinstance(name, str) or not isinstance(spec, dict) or spec.get("type") not in _TYPES:
            return None
        field: dict[str, Any] = {"name": name[:MAX_TEXT], "type": spec["type"], "required": name in required,
                                 "title": str(spec.get("title") or name)[:MAX_TEXT]}
        if isinstance(spec.get("description"), str):
            field["description"] = spec["description"][:MAX_TEXT]
        choices = spec.get("enum") or [o.get("const") for o in spec.get("oneOf") or () if isinstance(o, dict)]
        if choices:
            if spec["type"] != "string" or not all(isinstance(c, str) for c in choices):
                return None
            field["enum"] = [c[:MAX_TEXT] for c in choices[:50]]
            names = spec.get("enumNames") or [o.get("title") for o in spec.get("oneOf") or () if isinstance(o, dict)]
            if names and len(names) == len(choices) and all(isinstance(n, str) for n in names):
                field["enumNames"] = [n[:MAX_TEXT] for n in names[:50]]
        for key in ("default", "minimum", "maximum", "format", "minLength", "maxLength"):
            if key in spec and isinstance(spec[key], (str, int, float, bool)):
                field[key] = spec[key]
        fields.append(field)
    return fields


def checked(fields: list[dict[str, Any]], value: Any) -> dict[str, Any] | None:
    """The answer's content, each value of its field's type; None when it does not fit."""
    if not isinstance(value, dict):
        return None
    known = {f["name"]: f for f in fields}
    if any(key not in known for key in value):
        return None
    out: dict[str, Any] = {}
    for name, field in known.items():
        item = value.get(name)
        if item is None or item == "":
            if field["required"]:
                return None
            continue
        kind = field["type"]
        if kind == "boolean" and isinstance(item, bool):
            out[name] = item
        elif kind in ("number", "integer") and isinstance(item, (int, float)) and not isinstance(item, bool) \
                and math.isfinite(item) and (kind == "number" or float(item).is_integer()):
            number = int(item) if kind == "integer" else item
            if ("minimum" in field and number < field["minimum"]) or ("maximum" in field and number > field["maximum"]):
                return None
            out[name] = number
        elif kind == "string" and isinstance(item, str) and len(item) <= MAX_VALUE \
                and ("enum" not in field or item in field["enum"]):
            out[name] = item
        else:
            return None
    return out


async def ask_user(asker: Asker, server_id: str, message: str, schema: Any, progress: Any = None
                   ) -> tuple[str, dict[str, Any] | None]:
    """Ask; (action, content) for the server's ElicitResult."""
    fields = fields_of(schema)
    if fields is None:
        log.info("MCP server %s asked a question whose form is not flat; declined", server_id)
        return "decline", None
    request = {"kind": "elicitation", "server": server_id, "message": str(message)[:MAX_MESSAGE], "fields": fields}
    try:
        with clock_stopped(progress):
            answer = await asyncio.wait_for(asker(request), QUESTION_TIMEOUT_S)
    except asyncio.TimeoutError:
        return "cancel", None
    kind = answer.get("kind") if isinstance(answer, dict) else None
    if kind == "submit":
        content = checked(fields, answer.get("value"))
        if content is None:
            log.info("MCP server %s: the answer to its question did not fit its form; cancelled", server_id)
            return "cancel", None
        return "accept", content
    if kind == "cancel" and answer.get("note") == "decline":
        return "decline", None
    return "cancel", None
