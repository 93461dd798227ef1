"""`ToolSpec`: what the host knows about a tool before it runs.

One frozen record per tool. The gatekeeper reads level, effects, category, `url_param` and the
origin flags from it; later issues hang the parameter schema (`params_type`) and the executor on
the same record instead of keeping a parallel table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Level = Literal["L0", "L1", "L2", "builtin", "mcp"]
Effects = Literal["read", "write"]
Recovery = Literal["retry-safe", "never-retry", "inspect-first"]
Trust = Literal["trusted", "untrusted"]
Provenance = Literal["tool", "page", "mcp", "import"]

from protocol.tools import TOOL_EFFECTS as EFFECTS, TOOL_LEVELS as LEVELS  # declared once, for the wire too
RECOVERIES: tuple[str, ...] = ("retry-safe", "never-retry", "inspect-first")

# Action categories for writes (reads have none). `category:<name>` rules match on these.
CATEGORIES: tuple[str, ...] = (
    "navigate", "organize", "click", "fill", "eval", "download", "upload", "interact", "memory", "mcp",
)


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """The identity of one tool.

    Defaults follow the tool registry conventions: reads are retry-safe and writes never-retry;
    builtin results are trusted tool output, MCP results untrusted MCP output, and browser results
    untrusted page content.
    """

    name: str
    label: str
    level: Level
    effects: Effects
    description: str
    category: str | None = None
    # The parameter holding a destination URL: such a tool is judged by where it goes.
    url_param: str | None = None
    # True when the call has no page or server target (memory, questions to the user...).
    originless: bool = False
    # Allowed under every policy, `always` included (it cannot act on the world).
    always_allowed: bool = False
    # The host process itself fetches the URL: the SSRF guard applies.
    host_fetch: bool = False
    # Waits on the user or a condition instead of executing (`waiting_interaction`).
    interaction: bool = False
    recovery: Recovery | None = None
    result_trust: Trust | None = None
    result_provenance: Provenance | None = None
    # Seam for later issues: the msgspec Struct the parameters decode into.
    params_type: type | None = None

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
