"""What the fields a call types into will hold afterwards, so that a secret typed in pieces (two
`type` calls in append mode, two actions of one batch, key by key) is judged as the whole.

The field's value before the call comes from the target facts: `values` (ref -> value, which
the host keeps from the page's snapshots) or, for a one-field call, `value`. Actions of a batch
that type into the same field (the same ref, or refs of the same element) accumulate, and the
texts of a batch are also judged together, as a number spread over several boxes. A box of a few
digits is judged with the boxes right before and after it (`fields_before`, `fields_after`: their
values in document order), so that boxes filled one call at a time read whole too. Keys pressed
one call at a time add to what the host recorded the earlier keys typed (`focus_value` for keys
pressed into the focused field, or the field's value).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from host.gatekeeper.facts.normalize import compact, digits

MAX_VALUE = 200_000  # more than any field a person fills; keeps a hostile batch cheap
FOCUS = ""  # the ref of "whatever has the focus", for keys pressed without a ref
MAX_BOX_DIGITS = 6  # card forms split numbers into boxes of 4 to 6 digits


@dataclass(frozen=True, slots=True)
class FieldValues:
    """What a call leaves in the fields it types into, where that differs from the text typed."""

    # Each field built up from more than one piece (appended to its value, or over a batch).
    whole: tuple[str, ...] = ()
    # The pieces of several fields read as one (a card number in one box per group): right for
    # secret detection, too loose for comparing with the user's words, where two of their own
    # values side by side would read as a third.
    joined: tuple[str, ...] = ()

    @property
    def all(self) -> list[str]:
        return [*self.whole, *self.joined]


def field_values(tool: str, params: Mapping[str, Any], target: Mapping[str, Any] | None) -> FieldValues:
    """The values the call leaves in the fields it types into (empty when it types nothing that
    differs from its own text)."""
    facts = target if isinstance(target, Mapping) else {}
    steps = _typing_steps(tool, params)
    if not steps:
        return FieldValues()
    priors = _priors(facts)
    single = facts.get("value") if isinstance(facts.get("value"), str) else ""
    keys = _element_keys(facts)
    held: dict[str, str] = {}
    pieces: dict[str, int] = {}
    for ref, text, append in steps:
        key = keys.get(ref, ref)
        if append:
            before = held[key] if key in held else priors.get(ref, single)
            held[key] = (before + text)[-MAX_VALUE:]
            pieces[key] = pieces.get(key, 1 if before else 0) + 1
        else:
            held[key] = text[-MAX_VALUE:]
            pieces[key] = 1
    joined = []
    if len(steps) > 1:
        # A number spread over several fields of one batch (card forms with a box per group).
        joined.append(" ".join(text for _, text, _ in steps)[-MAX_VALUE:])
    if len(held) == 1:
        boxes = _with_neighbour_boxes(next(iter(held.values())), facts)
        if boxes is not None:
            joined.append(boxes)
    return FieldValues(tuple(value for key, value in held.items() if pieces.get(key, 0) > 1), tuple(joined))


def resulting_values(tool: str, params: Mapping[str, Any], target: Mapping[str, Any] | None) -> list[str]:
    """Every value of `field_values`, whole fields first."""
    return field_values(tool, params, target).all


def _with_neighbour_boxes(value: str, facts: Mapping[str, Any]) -> str | None:
    """The field's value joined with the short all-digit values of the fields right before and
    after it (`fields_before`, `fields_after`), when it is such a box itself: a number typed box
    by box over several calls reads whole. None when there is nothing to join."""
    if not _is_box(value):
        return None
    before = _strings(facts.get("fields_before"))
    after = _strings(facts.get("fields_after"))
    run_before: list[str] = []
    for other in reversed(before):
        if not _is_box(other):
            break
        run_before.insert(0, other)
    run_after: list[str] = []
    for other in after:
        if not _is_box(other):
            break
        run_after.append(other)
    if not run_before and not run_after:
        return None
    return " ".join([*run_before, value, *run_after])


def _is_box(value: str) -> bool:
    # One box of a number typed group by group: a few digits and nothing else.
    form = digits(value)
    return 0 < len(form) <= MAX_BOX_DIGITS and len(form) == len(compact(value))


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _typing_steps(tool: str, params: Mapping[str, Any]) -> list[tuple[str, str, bool]]:
    """(ref, text, appends) for every typing step of the call."""
    if tool in ("type", "type_trusted"):
        return _step(params)
    if tool == "press_key":
        key, ref = params.get("key"), params.get("ref")
        # A printable character typed into a field adds to its value; Enter or Tab do not.
        repeat = params.get("repeat", 1)
        times = repeat if isinstance(repeat, int) and repeat > 0 else 1
        if isinstance(key, str) and len(key) == 1 and key.isprintable():
            # Pressed `repeat` times, each adds it again; without a ref, into the focused field.
            return [(ref if isinstance(ref, str) else FOCUS, key * times, True)]
        return []
    if tool == "batch_actions":
        steps: list[tuple[str, str, bool]] = []
        actions = params.get("actions")
        for action in actions if isinstance(actions, list) else ():
            if isinstance(action, Mapping) and action.get("action") == "type":
                steps.extend(_step(action))
        return steps
    return []


def _step(params: Mapping[str, Any]) -> list[tuple[str, str, bool]]:
    ref, text = params.get("ref"), params.get("text")
    if not isinstance(ref, str) or not isinstance(text, str):
        return []
    return [(ref, text, params.get("mode") == "append")]


def _priors(facts: Mapping[str, Any]) -> dict[str, str]:
    # `values` as the host gathers them; a what-if case may give one `value` for its one field.
    values = facts.get("values")
    priors = {str(k): v for k, v in values.items() if isinstance(v, str)} if isinstance(values, Mapping) else {}
    focus = facts.get("focus_value")
    if isinstance(focus, str) and focus:
        priors[FOCUS] = focus  # what keys pressed into the focused field typed so far
    return priors


def _element_keys(facts: Mapping[str, Any]) -> dict[str, str]:
    # Refs of two snapshots can name one element: the element key the page gave it joins them.
    out: dict[str, str] = {}
    hints = facts.get("hints")
    for hint in hints if isinstance(hints, list) else ():
        if isinstance(hint, Mapping) and isinstance(hint.get("ref"), str):
            key = hint.get("element_key") or hint.get("elementKey")
            if isinstance(key, str) and key:
                out[hint["ref"]] = "element:" + key
    return out
