"""The base of every tool's parameters, the value types they share, and the one decoder.

Parameters are msgspec Structs, camelCase on the wire (what the model writes). A tool's Struct
is its `ToolSpec.params_type`; the provider schemas, the page executor's checks and this
decoder all read the same bounds from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

import msgspec

from host.tools.failure import ToolCode, ToolFailure

if TYPE_CHECKING:
    from host.tools.spec import ToolSpec

TabId = Annotated[int, msgspec.Meta(ge=0, le=2**31 - 1, description="A tab id from tabs_list; defaults to the task's tab.")]
Url = Annotated[str, msgspec.Meta(min_length=1, max_length=8192, description="An absolute http(s) URL.")]
SearchText = Annotated[str, msgspec.Meta(min_length=1, max_length=1000)]

# Keys the model writes for the host that the page executor never sees: the tab, the model's
# description of the target (shown for approval), and the paging offset the host applies.
HOST_ONLY_KEYS: tuple[str, ...] = ("tabId", "element", "fromChar")

# The key the host adds beside every `ref` of a page write: the element's role and accessible
# name as the host knows them from the snapshot the ref came from (what the gatekeeper judged
# and the approval card showed). The page executor acts only on an element that still has
# them. The model never sends it: the parameter Structs refuse it as an unknown field.
EXPECT_KEY = "expect"
EXPECT_ROLE_MAX = 64  # the ref map keeps a hint's role and name up to these lengths
EXPECT_NAME_MAX = 200
EXPECT_URL_MAX = 8192  # as long as the snapshot reports a destination's URL
EXPECT_METHOD_MAX = 16


@dataclass(frozen=True)
class Rule:
    """A rule across fields, beyond each field's own bounds (checked by the host when the
    parameters decode, and by the page executor from its generated copy). Fields are named as
    on the wire; a field counts as given when it is not null and, where `when` names a JSON type
    ("string") or a value (true) for it, matches that.

        at_least_one   one of `fields` is given
        not_together   not all of `fields` are given
        needs          the first field given needs all the others
    """

    kind: Literal["at_least_one", "not_together", "needs"]
    fields: tuple[str, ...]
    message: str
    when: dict[str, Any] = field(default_factory=dict)

    def broken(self, values: dict[str, Any]) -> bool:
        """True when `values` (wire names) break this rule."""
        given = [_given(values.get(name), self.when.get(name)) for name in self.fields]
        if self.kind == "at_least_one":
            return not any(given)
        if self.kind == "not_together":
            return all(given)
        return given[0] and not all(given[1:])

    def wire(self) -> dict[str, Any]:
        """The rule as the generated JavaScript copy holds it."""
        return {"kind": self.kind, "fields": list(self.fields), "message": self.message, "when": dict(self.when)}


def _given(value: Any, when: Any) -> bool:
    if value is None:
        return False
    if when == "string":
        return isinstance(value, str)
    return when is None or value is when


class Params(msgspec.Struct, forbid_unknown_fields=True, rename="camel", kw_only=True, omit_defaults=True):
    """Base of every tool's parameters; `rules` are its cross-field rules."""

    rules: ClassVar[tuple[Rule, ...]] = ()

    def __post_init__(self) -> None:
        if self.rules:
            values = {f.encode_name: getattr(self, f.name) for f in msgspec.structs.fields(self)}
            for rule in self.rules:
                if rule.broken(values):
                    raise ValueError(rule.message)


class PageParams(Params, kw_only=True):
    """Tools that act on one tab: `tabId` picks it, else the task's tab."""

    tab_id: TabId | None = None


def decode(spec: "ToolSpec", raw: Any) -> Params:
    """Validate `raw` (decoded JSON; None counts as no arguments) as the parameters of `spec`.

    Raises ToolFailure `invalid_params` (phase `validate`) naming the bad field's path:
    `Invalid parameters for read_page: Expected int <= 6000 - at $.maxTokens`.
    """
    kind = spec.params_type
    if kind is None:
        raise ToolFailure(ToolCode.INVALID_PARAMS, f"{spec.name} has no declared parameter type", phase="validate")
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ToolFailure(ToolCode.INVALID_PARAMS, f"Invalid parameters for {spec.name}: expected an object, got "
                          f"{type(raw).__name__}", phase="validate")
    try:
        return msgspec.convert(raw, kind)
    except (msgspec.ValidationError, ValueError) as exc:
        raise ToolFailure(ToolCode.INVALID_PARAMS, f"Invalid parameters for {spec.name}: {exc}", phase="validate") from None


def wire(params: Any) -> dict[str, Any]:
    """The parameters as JSON-ready camelCase (defaults applied): what the gatekeeper judges and
    the approval card shows."""
    return msgspec.to_builtins(params) if isinstance(params, msgspec.Struct) else dict(params or {})


def content_params(params: Params, *, ref_recovery: bool = False,
                   expect: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """The parameters as the page executor takes them: host-only keys removed (inside each batch
    action too), `allowRecovery` for tools whose stale ref may be recovered in the page, and for
    a write, `expect` (role and name, and where the element leads when it leads somewhere, from
    `expect[ref]`) beside every ref it acts on. A write
    with a ref `expect` does not cover is refused here, before anything is sent."""
    out = msgspec.to_builtins(params)
    for key in HOST_ONLY_KEYS:
        out.pop(key, None)
    for action in out.get("actions", ()):
        action.pop("element", None)
    if ref_recovery:
        out["allowRecovery"] = True
    if expect is not None:
        for holder in (out, *out.get("actions", ())):
            ref = holder.get("ref")
            if ref is None:
                continue
            shown = expect.get(ref)
            if shown is None:
                raise ToolFailure(ToolCode.STALE_REF, f"ref {ref} is not from a snapshot of this tab; call read_page again",
                                  phase="resolve", retryable=True, details={"dispatched": False})
            expected: dict[str, Any] = {"role": shown["role"][:EXPECT_ROLE_MAX], "name": shown["name"][:EXPECT_NAME_MAX]}
            leads = shown.get("leads")
            if isinstance(leads, Mapping) and isinstance(leads.get("url"), str):
                expected["leads"] = {"url": leads["url"][:EXPECT_URL_MAX],
                                     "method": str(leads.get("method") or "GET")[:EXPECT_METHOD_MAX],
                                     "newTab": bool(leads.get("newTab") or leads.get("new_tab"))}
            holder[EXPECT_KEY] = expected
    return out
