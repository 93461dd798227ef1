"""`ToolSpec`: everything the host knows about a tool before it runs, in one record.

The gatekeeper reads level, effects, category, `url_param` and the origin flags; the router
reads `runner` and `target`; parameters are validated against `params_type`, from which the
provider schemas and the extension's generated copy are derived; the loop reads `escalation`
and the recovery and trust facts. Nothing about a tool is kept in a parallel table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, get_args

from protocol.tools import TOOL_EFFECTS as EFFECTS
from protocol.tools import TOOL_LEVELS as LEVELS
from protocol.tools import ToolEffects as Effects
from protocol.tools import ToolLevel as Level

Recovery = Literal["retry-safe", "never-retry", "inspect-first"]
Trust = Literal["trusted", "untrusted"]
Provenance = Literal["tool", "page", "mcp", "import"]
Service = Literal["browser", "builtins", "mcp", "interactions", "skills"]
# What a call acts on, which its service resolves before the gatekeeper judges it:
#   none      nothing
#   destination  the URL in `url_param`, which the host or the browser loads without a tab
#   tab       the tab named by `tabId`, whatever it shows
#   routed    an http(s) tab (`tabId` or the task's), driven through the tabs API
#   history   a routed tab and the entry of its history the call goes to (its URL is where the
#             call leads: `destinations` in the target's facts)
#   closed    the recently closed tab or window `sessionId` names (the URLs it reopens are where
#             the call leads), judged at the origin of the tab it shows
#   page      an http(s) tab the call runs inside: the extension needs site access to it
#   watched   an http(s) tab whose text is read only if the call asks for text
#   server    the origin of the MCP server that owns the tool
Target = Literal["none", "destination", "tab", "routed", "history", "closed", "page", "watched", "server"]

RECOVERIES: tuple[str, ...] = get_args(Recovery)
SERVICES: tuple[str, ...] = get_args(Service)
TARGETS: tuple[str, ...] = get_args(Target)

# Action categories for writes (reads have none). `category:<name>` rules match on these.
Category = Literal["navigate", "organize", "click", "fill", "eval", "download", "upload", "interact", "memory", "mcp"]
CATEGORIES: tuple[str, ...] = get_args(Category)


@dataclass(frozen=True, slots=True)
class Runner:
    """Who runs a tool: the service the host registers under `service`, calling the coroutine
    function `module:function` as `function(call, service)`. Named by path so that declaring a
    tool never imports the code that runs it (the gatekeeper and the CLI read declarations)."""

    service: Service
    function: str

    def __post_init__(self) -> None:
        if self.service not in SERVICES:
            raise ValueError(f"runner service {self.service!r} is not one of {SERVICES}")
        module, sep, name = self.function.partition(":")
        if not (module and sep and name.isidentifier()):
            raise ValueError(f"runner {self.function!r} must read 'package.module:function'")


@dataclass(frozen=True, slots=True, eq=False)
class ToolSpec:
    """The declaration of one tool.

    The defaults follow from level and effects: reads are retry-safe and writes never-retry;
    builtin results are trusted tool output, MCP results untrusted MCP output, and browser results
    untrusted page content.
    """

    name: str
    label: str
    level: Level
    effects: Effects
    description: str
    category: Category | None = None
    # The parameter holding a destination URL: such a tool is judged by where it goes.
    url_param: str | None = None
    # True when the call has no page or server target (memory, questions to the user...).
    originless: bool = False
    # Allowed under every policy, `always` included (it cannot act on the world).
    always_allowed: bool = False
    # The host process itself fetches the URL: the SSRF guard applies.
    host_fetch: bool = False
    # Waits on the user or a condition instead of executing (`waiting_interaction`); such a call
    # must be the only one of its answer.
    interaction: bool = False
    recovery: Recovery | None = None
    result_trust: Trust | None = None
    result_provenance: Provenance | None = None
    # The msgspec Struct the parameters decode into (None for MCP tools, whose server gives
    # `input_schema`).
    params_type: type | None = None
    input_schema: dict[str, Any] | None = None
    target: Target = "none"
    runner: Runner | None = None
    # The page executor (the content script) runs it, so it checks the parameters too, from
    # the generated copy of `params_type`.
    page_executor: bool = False
    # A stale ref may be recovered once inside the page, to a unique identical element.
    ref_recovery: bool = False
    # The trusted twin run (as a call of its own, judged again) when the page ignored this
    # tool's synthetic input.
    escalation: str | None = None

    def __post_init__(self) -> None:
        if not self.name or any(ch.isspace() or ord(ch) < 32 for ch in self.name):
            raise ValueError(f"tool name {self.name!r} must be non-empty without whitespace")
        if not self.label or not self.description:
            raise ValueError(f"tool {self.name}: label and description must be non-empty")
        if self.level not in LEVELS:
            raise ValueError(f"tool {self.name}: level {self.level!r} is not one of {LEVELS}")
        if self.effects not in EFFECTS:
            raise ValueError(f"tool {self.name}: effects {self.effects!r} is not one of {EFFECTS}")
        if self.effects == "read" and self.category is not None:
            raise ValueError(f"tool {self.name}: reads have no action category")
        if self.category is not None and self.category not in CATEGORIES:
            raise ValueError(f"tool {self.name}: unknown category {self.category!r}")
        if self.target not in TARGETS:
            raise ValueError(f"tool {self.name}: target {self.target!r} is not one of {TARGETS}")
        if self.target == "destination" and not self.url_param:
            raise ValueError(f"tool {self.name}: a destination target needs url_param")
        if self.recovery is None:
            object.__setattr__(self, "recovery", "retry-safe" if self.effects == "read" else "never-retry")
        elif self.recovery not in RECOVERIES:
            raise ValueError(f"tool {self.name}: recovery {self.recovery!r} is not one of {RECOVERIES}")
        if self.result_trust is None:
            object.__setattr__(self, "result_trust", "trusted" if self.level == "builtin" else "untrusted")
        if self.result_provenance is None:
            provenance = {"builtin": "tool", "mcp": "mcp"}.get(self.level, "page")
            object.__setattr__(self, "result_provenance", provenance)

    @property
    def is_write(self) -> bool:
        """True for tools that change something (everything the gatekeeper really judges)."""
        return self.effects == "write"
