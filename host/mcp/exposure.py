"""Which listed server tools the model is offered, and under what name and schema.

A server tool `t` of server `s` becomes `mcp__s__t`. Names must fit every provider
(`^[A-Za-z0-9_-]{1,64}$`), so a tool whose name has other characters or is too long is
skipped, with the reason kept for `mcp.tools`. The input schema must be a JSON-schema object
of bounded size. The server's title is only a label and its annotations (readOnlyHint...) are
ignored: every MCP tool is a write (see host.tools.catalog.mcp_tool).

Every text the server wrote that the model reads in a declaration (the tool's description, and
each `description` and `title` inside the input schema) is the server's words, not ours: it is
prefixed with `[MCP server '<id>']` and given as one quoted string (`host.tools.quoting`),
clipped, with nothing invisible and no fence markers, so it cannot pass for Tabwarden's text.
`$comment`s, `examples` and long string defaults are left out; a tool whose enum or const
strings are long (they cannot be changed) is not offered. The kernel prompt tells the model
what these are.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any, Mapping

from host.tools.catalog import mcp_tool_name
from host.tools.quoting import quoted

PROVIDER_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
MAX_SCHEMA_BYTES = 32 * 1024
MAX_DESCRIPTION_CHARS = 1500
MAX_LABEL_CHARS = 100
MAX_SCHEMA_TEXT_CHARS = 300  # a property's description or title
MAX_VALUE_CHARS = 200  # a string the model must send back as is (enum, const) or a default
_SCHEMA_TEXTS = ("description", "title")
_DROPPED = ("$comment", "examples")  # hints only: server prose the model does not need
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


@dataclass(frozen=True)
class ExposedTool:
    """A server tool the model may call."""

    name: str  # mcp__<server>__<tool>
    server: str
    tool: str  # the name the server knows it by
    label: str
    description: str
    schema: dict[str, Any]
    # A hash of what the server said the tool is (title, description, input schema): approvals,
    # grants and rules hold for this definition only.
    definition: str = ""


@dataclass(frozen=True)
class Skipped:
    """A listed tool that is not offered, and why."""

    tool: str
    reason: str


def _clip(text: str, limit: int) -> str:
    text = _CONTROL.sub(" ", text).strip()
    return text if len(text) <= limit else text[:limit - 1] + "…"


def schema_problem(schema: Any) -> str | None:
    """Why `schema` cannot be given to the model as a parameter schema (None when it can)."""
    if not isinstance(schema, dict):
        return "its inputSchema is not a JSON object"
    if schema.get("type") != "object":
        return "its inputSchema is not of type object"
    for key in ("properties", "required"):
        expected = dict if key == "properties" else list
        if key in schema and not isinstance(schema[key], expected):
            return f"its inputSchema {key} is not a JSON {'object' if expected is dict else 'array'}"
    try:
        size = len(json.dumps(schema, ensure_ascii=False).encode())
    except (TypeError, ValueError):
        return "its inputSchema is not plain JSON"
    if size > MAX_SCHEMA_BYTES:
        return f"its inputSchema is {size} bytes (at most {MAX_SCHEMA_BYTES})"
    if _long_value(schema):
        # They cannot be clipped or quoted without changing what the call must send.
        return f"its inputSchema has an enum or const string over {MAX_VALUE_CHARS} characters"
    return None


def _long_value(schema: Any) -> bool:
    if isinstance(schema, list):
        return any(_long_value(item) for item in schema)
    if not isinstance(schema, dict):
        return False
    for key, value in schema.items():
        values = value if key == "enum" and isinstance(value, list) else [value] if key == "const" else []
        if any(isinstance(v, str) and len(v) > MAX_VALUE_CHARS for v in values):
            return True
        if isinstance(value, (dict, list)) and key not in ("enum", "const", "default", "examples") and \
                _long_value(value):
            return True
    return False


def expose(server: str, listed: Mapping[str, Any]) -> ExposedTool | Skipped:
    """The exposed form of one tool from a `tools/list` answer (its JSON form)."""
    tool = listed.get("name")
    if not isinstance(tool, str) or not tool:
        return Skipped(str(tool), "it has no name")
    name = mcp_tool_name(server, tool)
    if not PROVIDER_TOOL_NAME.match(name):
        return Skipped(tool, f"{name!r} is not a valid model tool name (1-64 of A-Z a-z 0-9 _ -)")
    execution = listed.get("execution")
    if isinstance(execution, Mapping) and execution.get("taskSupport") == "required":
        # Such a tool only runs as a task (answered later, polled); the host calls tools directly.
        return Skipped(tool, "it can only run as an MCP task (execution.taskSupport is required), "
                             "which Tabwarden does not support")
    schema = listed.get("inputSchema")
    problem = schema_problem(schema)
    if problem is not None:
        return Skipped(tool, problem)
    title = listed.get("title") or (listed.get("annotations") or {}).get("title")
    label = _clip(title, MAX_LABEL_CHARS) if isinstance(title, str) and title.strip() else name
    text = listed.get("description")
    description = server_words(server, text, MAX_DESCRIPTION_CHARS) if isinstance(text, str) and text.strip() \
        else f"Tool {quoted(tool, 64)} of MCP server {server!r} (no description)."
    return ExposedTool(name=name, server=server, tool=tool, label=label, description=description,
                       schema=marked_schema(server, schema), definition=definition_hash(listed))


def server_words(server: str, text: str, limit: int) -> str:
    """A server's text as the model may read it: prefixed with its server and quoted as data."""
    return f"[MCP server {server!r}] {quoted(_CONTROL.sub(' ', text).strip(), limit)}"


def marked_schema(server: str, schema: Any) -> Any:
    """A copy of `schema` whose every `description` and `title` text is marked as the server's
    words (`server_words`), without `$comment`s, `examples` and long string defaults; what a
    call must send (types, properties, enums) is unchanged."""
    if isinstance(schema, list):
        return [marked_schema(server, item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _DROPPED:
            continue
        if key in _SCHEMA_TEXTS and isinstance(value, str):
            out[key] = server_words(server, value, MAX_SCHEMA_TEXT_CHARS)
        elif key == "default" and isinstance(value, str) and len(value) > MAX_VALUE_CHARS:
            continue  # an optional hint: a long one is left out rather than passed on unmarked
        else:
            out[key] = marked_schema(server, value)
    return out


def definition_hash(listed: Mapping[str, Any]) -> str:
    """A stable hash of the parts of a listed tool the user approves: its name, title,
    description and input schema (as the server sent them, before any clipping)."""
    parts = {key: listed.get(key) for key in ("name", "title", "description", "inputSchema")}
    parts["annotationsTitle"] = (listed.get("annotations") or {}).get("title") if isinstance(
        listed.get("annotations"), Mapping) else None
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]
