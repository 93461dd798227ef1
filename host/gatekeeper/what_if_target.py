"""The `target` of a what-if case (`tabwarden policy check|explain|test`, policy file examples):
the facts about the acted-on element that the host would otherwise gather from the page, so
that a decision on facts can be reproduced from the command line.

    "target": {"role": "textbox", "name": "Account password", "autocomplete": "current-password",
               "field_name": "passwd", "input_type": "text", "value": "4111 1111 ",
               "destination": "https://pay.example/x", "method": "POST"}

`value` is the field's value before the call (what `type` in append mode adds to);
`fields_before` and `fields_after` the values of the fields around it, in document order (boxes
of one number); a batch names its elements in `hints` (one per ref) and their values in `values`
(ref -> value). Where the hints lead (`hints[].destination`) is where the call leads, as on a page.
"""

from __future__ import annotations

from typing import Any, Union

import msgspec

from host.gatekeeper.errors import InvalidInput

Text = msgspec.Meta(max_length=100_000)


class Lead(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, rename={"new_tab": "newTab"}):
    """Where acting on the element leads."""

    url: str = ""
    method: str = "GET"
    new_tab: bool = False
    unresolved: bool = False


class Hint(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    """One element of the call (a batch has several)."""

    ref: str
    role: str = ""
    name: str = ""
    input_type: str | None = None
    autocomplete: str | None = None
    field_name: str | None = None
    label: str | None = None
    placeholder: str | None = None
    credential: bool = False
    element_key: str | None = None
    destination: Lead | None = None
    tag: str | None = None
    submits: bool = False  # the element is its form's submit control
    form_fields: list[str] | None = None  # autocomplete tokens or input types of its form's fields
    heading: str | None = None  # the nearest heading above it


class TargetFacts(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    """What the host knows of the element(s) a call acts on."""

    role: str | None = None
    name: str | None = None
    input_type: str | None = None
    input_types: list[str] | None = None
    autocomplete: str | None = None
    field_name: str | None = None
    label: str | None = None
    placeholder: str | None = None
    credential: bool | None = None
    value: str | None = None
    values: dict[str, str] | None = None
    fields_before: list[str] | None = None  # the values of the fields right before it, in order
    fields_after: list[str] | None = None
    focus_value: str | None = None  # what keys pressed into the focused field typed so far
    hints: list[Hint] | None = None
    destination: str | None = None
    method: str | None = None
    destinations: list[Union[str, Lead]] | None = None
    title: str | None = None  # the page's title
    submits: bool | None = None
    form_fields: list[str] | None = None
    heading: str | None = None


FIELDS = tuple(TargetFacts.__struct_fields__)


def parse_target(obj: object, *, path: str = "$.target", source: str | None = None) -> dict[str, Any]:
    """The validated facts of a what-if `target` as the decision reads them; raise `InvalidInput`
    (`invalid_case`) naming the bad field and, for an unknown one, the fields there are."""
    try:
        facts = msgspec.convert(obj, TargetFacts)
    except msgspec.ValidationError as exc:
        message, _, where = str(exc).partition(" - at `")
        where = where.rstrip("`")
        if message.startswith("Object contains unknown field") and where in ("", "$"):
            message += f"; a target may give {', '.join(FIELDS)}"
        raise InvalidInput("invalid_case", message, path + where[1:] if where else path, source) from None
    out = msgspec.to_builtins(facts)
    leads = [h["destination"] for h in out.get("hints") or () if h.get("destination")]
    if leads and "destinations" not in out and "destination" not in out:
        out["destinations"] = leads  # as the host gathers them from a page's refs
    return out
