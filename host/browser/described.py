"""What the host knows of the elements a page call acts on, for the gatekeeper and the approval
card: the refs it names, their facts (input types, hints) and their snapshot lines. A write may
only name refs the host has seen, or it could not say what it targets."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from host.browser.l2.deep_refs import deep_facts, is_deep_ref
from host.browser.refmap import target_facts
from host.tools.browser_params import BatchActionsParams
from host.tools.call import ToolCall
from host.tools.failure import ToolCode, ToolFailure

if TYPE_CHECKING:
    from host.browser.gateway import BrowserGateway

MAX_LINE = 500


def refs_used(call: ToolCall) -> list[str]:
    """Every ref the call acts on (batch actions included)."""
    if isinstance(call.params, BatchActionsParams):
        return [action.ref for action in call.params.actions]
    ref = getattr(call.params, "ref", None)
    return [ref] if ref else []


def facts(call: ToolCall, tab_id: int, browser: "BrowserGateway") -> dict[str, Any] | None:
    """What the host knows of the call's targets, for the gatekeeper (None without refs)."""
    used = refs_used(call)
    typed_run = browser.key_runs.typed(tab_id, used[0] if used else None) if call.tool == "press_key" else ""
    if not used:
        # Keys pressed into whatever has the focus: what they typed so far is the field's value.
        return {"focus_value": typed_run} if typed_run else None
    deep = [browser.deep_refs.peek(tab_id, ref) for ref in used if is_deep_ref(ref)]
    hints = [browser.refs.lookup(tab_id, ref) for ref in used if not is_deep_ref(ref)]
    values = {}
    for hint in hints:
        value = browser.refs.value_of(tab_id, hint) if hint is not None else None
        if typed_run and not (value or "").endswith(typed_run):
            value = (value or "") + typed_run  # the page's last word on the field predates these keys
        if value is not None:
            values[hint.ref] = value  # what text typed in append mode adds to
    found = target_facts(hints, values)
    if len(hints) == 1 and hints[0] is not None:
        # A number typed box by box over several calls (card forms with a box per group).
        before, after = browser.refs.neighbour_values(tab_id, hints[0])
        if any(before) or any(after):
            found["fields_before"], found["fields_after"] = before, after
    if deep:
        extra = deep_facts(deep)
        found["hints"] = [*found["hints"], *extra["hints"]]
        types = [*found.get("input_types", []), *extra.get("input_types", [])]
        if types:
            found["input_types"] = types
            found.pop("input_type", None)
            if len(types) == 1:
                found["input_type"] = types[0]
    return found


def require_known_refs(call: ToolCall, tab_id: int, browser: "BrowserGateway") -> None:
    """Fail closed as `stale_ref` when a write names a ref the host has not seen in this tab
    (whatever its shape: an older format or a made-up ref names nothing here either)."""
    for ref in refs_used(call):
        if is_deep_ref(ref):
            if call.spec.level == "L1":
                raise ToolFailure(ToolCode.STALE_REF, f"ref {ref} comes from read_page_deep, which {call.tool} does not take; "
                                  f"call read_page again and use a ref from it", phase="resolve", retryable=True,
                                  details={"dispatched": False, "ref": ref})
            browser.deep_refs.check_known(tab_id, ref)
        elif browser.refs.lookup(tab_id, ref) is None:
            raise ToolFailure(ToolCode.STALE_REF, f"ref {ref} is not from a snapshot of this tab; call read_page again "
                              "and use a ref from it", phase="resolve", retryable=True,
                              details={"dispatched": False, "ref": ref})


def target_line(call: ToolCall, tab_id: int, browser: "BrowserGateway") -> str | None:
    """The snapshot lines of the elements the call acts on, as the approval card shows them."""
    used = refs_used(call)
    if not used:
        return None
    _, text = browser.refs.last_text(tab_id)
    lines = []
    for ref in used:
        marker = f"[ref={ref}]"
        if is_deep_ref(ref):
            node = browser.deep_refs.peek(tab_id, ref)
            found = f'- {node.role} "{node.name}" {marker}' if node is not None else None
        else:
            found = next((line.strip() for line in text.split("\n") if marker in line), None)
            if found is None:
                hint = browser.refs.lookup(tab_id, ref)
                found = f'- {hint.role} "{hint.name}" {marker}' if hint is not None else None
        if found:
            lines.append(found[:MAX_LINE])
    return "\n".join(lines) or None
