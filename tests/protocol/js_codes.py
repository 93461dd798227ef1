"""Where the extension's JavaScript names failure codes, read from its text (nothing runs).

A code is named either through a generated table (`CODES.NAME` and `TW.codes.NAME` for tool
codes, `PROTOCOL_CODES.NAME` and `ERROR_CODES.NAME` for the link's own) or, wrongly, as a string
literal: the first argument of a failure constructor (`failure(...)`, `TW.fail(...)`,
`new ActionFailure(...)`), a `code: "..."` field, or a `.code` compared with or set to a
literal. Lines are 1-based."""

from __future__ import annotations

import re
from dataclasses import dataclass

TOOL = "tool"  # protocol.errors.ToolCode, generated into tools.js
PROTOCOL = "protocol"  # protocol.errors.ErrorCode, generated into protocol.js

_LOOKUP = re.compile(r"(?<![\w$])(?:(CODES)|(PROTOCOL_CODES|ERROR_CODES)|[\w$]+\.(codes))\.([A-Za-z_$][\w$]*)")
_CONSTRUCTOR = re.compile(r"(?<![\w$.])(?<!function )(?:failure|TW\.fail|new\s+ActionFailure)\s*\(")
_FIELD = re.compile(r"(?<![\w$])code\s*:\s*([\"'`])((?:(?!\1).)*)\1")
_COMPARED = re.compile(r"\.code\s*(?:===|!==|==|!=|=)\s*([\"'`])((?:(?!\1).)*)\1")
_TYPEOF = re.compile(r"typeof\s+[\w$.]+")
_STRING = re.compile(r"([\"'`])((?:\\.|(?!\1).)*)\1")
_CLOSE = {"(": ")", "[": "]", "{": "}"}


@dataclass(frozen=True)
class Lookup:
    """`table`.`name` at `line`."""

    line: int
    table: str
    name: str


@dataclass(frozen=True)
class Literal:
    """A code spelled as a string literal at `line`; `where` says how it was used."""

    line: int
    value: str
    where: str


def lookups(text: str) -> list[Lookup]:
    """Every code named through a generated table."""
    found = []
    for match in _LOOKUP.finditer(text):
        table = PROTOCOL if match.group(2) else TOOL
        found.append(Lookup(_line(text, match.start()), table, match.group(4)))
    return found


def literals(text: str) -> list[Literal]:
    """Every code spelled as a string literal where a failure is built or its code is read."""
    found = []
    for match in _CONSTRUCTOR.finditer(text):
        first = first_argument(text, match.end())
        for string in _STRING.finditer(first):
            found.append(Literal(_line(text, match.start()), string.group(2), "constructor"))
    for match in _FIELD.finditer(text):
        found.append(Literal(_line(text, match.start()), match.group(2), "field"))
    # `typeof x.code === "string"` asks for a type, not a code.
    masked = _TYPEOF.sub(lambda m: "typeof_" + "_" * (len(m.group()) - 7), text)
    for match in _COMPARED.finditer(masked):
        found.append(Literal(_line(text, match.start()), match.group(2), "compared"))
    return sorted(found, key=lambda literal: literal.line)


def first_argument(text: str, start: int) -> str:
    """The text of the first argument of a call whose `(` ends just before `start`."""
    depth = []
    i = start
    while i < len(text):
        char = text[i]
        if char in "\"'`":
            string = _STRING.match(text, i)
            i = string.end() if string else i + 1
            continue
        if char in _CLOSE:
            depth.append(_CLOSE[char])
        elif depth and char == depth[-1]:
            depth.pop()
        elif not depth and char in ",)":
            break
        i += 1
    return text[start:i]


def injected_lists(text: str) -> dict[str, list[str]]:
    """The `*_FILES` arrays of content-relay.js: name -> files in injection order, with the
    `const NAME = "file"` constants they use resolved."""
    constants = dict(re.findall(r"const\s+([A-Z_]+)\s*=\s*\"([^\"]+)\"\s*;", text))
    lists = {}
    for name, body in re.findall(r"const\s+([A-Z_]+_FILES)\s*=\s*\[(.*?)\]\s*;", text, re.S):
        items = re.findall(r"\"([^\"]+)\"|([A-Z_]+)", body)
        lists[name] = [literal or constants[constant] for literal, constant in items]
    return lists


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1
