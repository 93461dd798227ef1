"""What a write expects of the elements it acts on: the role and accessible name each ref had in
the read it came from. That is what the gatekeeper judged and what the approval card showed (a
ref's hint never changes: a newer read mints new refs), taken from the call's target as it was
resolved again at dispatch. The page executor (L1, `expect` beside each ref) and the L2 target
check act only on an element that still has them, and the page executor only on one that still
leads where the gatekeeper judged it would (a link's URL, a form's action, method and target); a
page that renamed, repurposed or re-pointed the element in between gets `target_changed` and no
input."""

from __future__ import annotations

from typing import Any

from host.tools.call import ToolCall


def expected_elements(call: ToolCall) -> dict[str, dict[str, Any]]:
    """ref -> {"role", "name", "leads"?} for every ref the host described for the call ("leads":
    the destination the gatekeeper judged, when the element leads somewhere; none without facts:
    the caller refuses a ref it has no expectation for)."""
    facts: dict[str, Any] = (call.target.facts if call.target is not None else None) or {}
    out: dict[str, dict[str, Any]] = {}
    for hint in facts.get("hints") or ():
        if isinstance(hint, dict) and isinstance(hint.get("ref"), str) and isinstance(hint.get("role"), str):
            expected: dict[str, Any] = {"role": hint["role"], "name": str(hint.get("name") or "")}
            if isinstance(hint.get("destination"), dict):
                expected["leads"] = hint["destination"]
            out[hint["ref"]] = expected
    return out
