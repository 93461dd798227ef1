"""`ToolCall` and `Target`: one call as the router, the gatekeeper, the approval card and the
runners see it.

A call starts with its declaration and decoded parameters; its service resolves the target
(`Router.resolve`) before the gatekeeper judges it and again, under the service's hold, just
before it runs. Each resolution gives a new call; a runner reads the latest.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from host.tools.params import wire
from host.tools.spec import ToolSpec

MAX_THREAD_ID = 512


@dataclass(frozen=True)
class Target:
    """What a resolved call acts on."""

    origin: str = ""  # the origin the gatekeeper judges the call at ("" when it has none)
    url: str = ""  # the tab's URL, or the destination a call loads without a tab
    tab_id: int | None = None
    # What the host knows of the acted-on elements, for the gatekeeper (input types, hints).
    facts: dict[str, Any] | None = None
    # The acted-on elements' lines from the latest snapshot, for the approval card.
    line: str | None = None
    # Whether the extension may script `origin` now (None: the call does not run in a page).
    site_access: bool | None = None
    # Whether the tab shows an empty or new-tab page (which holds nothing to act on or carry away).
    start_page: bool = False
    # The service's own view of the target (an MCP server's tool, say); never shown or judged.
    handle: Any = field(default=None, compare=False, repr=False)

    def same_place(self, other: "Target") -> bool:
        """True when `other` is the same tab at the same origin whose elements lead to the same
        places (what an approval was given for). An empty or new-tab page is one place whatever
        the browser calls it meanwhile (its new-tab page loads under another address)."""
        here = self.origin == other.origin or (self.start_page and other.start_page)
        return self.tab_id == other.tab_id and here and self.leads() == other.leads()

    def element(self) -> tuple[str, str]:
        """The acted-on element's role and name (its label, accessible name or placeholder) when
        the call acts on exactly one known element; ("", "") otherwise."""
        hints = (self.facts or {}).get("hints") or ()
        if len(hints) != 1 or not isinstance(hints[0], dict):
            return "", ""
        hint = hints[0]
        name = next((str(hint[key]).strip() for key in ("label", "name", "placeholder") if str(hint.get(key) or "").strip()), "")
        return str(hint.get("role") or ""), name

    def leads(self) -> list[Any]:
        """Where the acted-on elements take the page (the facts' `destinations`), as judged."""
        return list((self.facts or {}).get("destinations") or ())


@dataclass
class ToolCall:
    """One call of one tool in one thread."""

    spec: ToolSpec
    params: Any  # the decoded parameter Struct (a plain dict for MCP tools)
    thread_id: str
    target: Target | None = None
    # Facts a runner adds on its way (a retry after a lost reply...), copied into its result.
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def tool(self) -> str:
        """The tool's name."""
        return self.spec.name

    @property
    def tab_id(self) -> int | None:
        """The resolved tab (None before resolution or for calls without one)."""
        return self.target.tab_id if self.target is not None else None

    @property
    def origin(self) -> str:
        """The resolved origin ("" before resolution or for calls without one)."""
        return self.target.origin if self.target is not None else ""

    def wire_params(self) -> dict[str, Any]:
        """The parameters as JSON (camelCase, defaults applied): what is judged and shown."""
        return wire(self.params)

    def resolved(self, target: Target, params: Any = None) -> "ToolCall":
        """This call on `target` (with normalised `params`, when the resolution changed them)."""
        return dataclasses.replace(self, target=target, params=self.params if params is None else params,
                                   details=dict(self.details))

    def describe(self) -> str:
        """`click "Save button"`: the tool and the model's description of the target."""
        element = getattr(self.params, "element", None)
        return f"{self.tool} {element!r}" if element else self.tool
