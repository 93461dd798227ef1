"""What a rule's `args` conditions are matched against.

The parameters, except the model's own words about the element (`element`), which prove nothing
about what a call acts on. For a tool that acts on an element, the facts the host holds about it
take their place:
  role   the element's role, from the snapshot the ref came from
  name   its accessible name, from the same snapshot
  to     where acting on it leads (a link's URL, the action of the form it submits)
A batch acts on several elements: each fact has one value per element (see `Several`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from host.gatekeeper.rules import Several

MODEL_TEXT_KEYS = frozenset({"element"})
FACT_KEYS = ("role", "name", "to")


def rule_subject(params: Mapping[str, Any], target: Mapping[str, Any] | None) -> dict[str, Any]:
    """The values `args` conditions see for a call with `params` on the element(s) `target`
    describes (facts replace parameters of the same name)."""
    subject = {key: value for key, value in params.items() if key not in MODEL_TEXT_KEYS}
    actions = subject.get("actions")
    if isinstance(actions, list):
        # A batch's actions carry the model's words too: a condition on `actions` never sees them.
        subject["actions"] = [{k: v for k, v in a.items() if k not in MODEL_TEXT_KEYS} if isinstance(a, Mapping) else a
                              for a in actions]
    if not _acts_on_elements(params):
        return subject
    for key in FACT_KEYS:
        subject.pop(key, None)  # only the host's facts may answer these
    hints = _hints(target)
    if hints:
        subject["role"] = Several(str(h.get("role") or "") for h in hints)
        subject["name"] = Several(str(h.get("name") or "") for h in hints)
    leads = _leads(target)
    if leads:
        subject["to"] = Several(leads)
    return subject


def _acts_on_elements(params: Mapping[str, Any]) -> bool:
    if "ref" in params or "element" in params:
        return True
    actions = params.get("actions")
    return isinstance(actions, list) and any(isinstance(a, Mapping) and "ref" in a for a in actions)


def _hints(target: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    if not isinstance(target, Mapping):
        return []
    hints = target.get("hints")
    found = [h for h in hints if isinstance(h, Mapping)] if isinstance(hints, list) else []
    if not found and ("role" in target or "name" in target):
        found = [target]  # a what-if case describes its one element directly
    return found


def _leads(target: Mapping[str, Any] | None) -> list[str]:
    if not isinstance(target, Mapping):
        return []
    leads = target.get("destinations")
    if leads is None and target.get("destination") is not None:
        leads = [target.get("destination")]
    out = []
    for lead in leads if isinstance(leads, list) else ():
        url = lead.get("url") if isinstance(lead, Mapping) else lead
        if isinstance(url, str) and url:
            out.append(url)
    return out
