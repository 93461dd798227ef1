"""`ToolCall`: one validated, routed and authorised call, as the tool implementations see it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from host.browser.params import Params, content_params
from host.browser.target import TabTarget
from host.tools.spec import ToolSpec

if TYPE_CHECKING:
    from host.browser.gateway import BrowserGateway


@dataclass
class ToolCall:
    spec: ToolSpec
    params: Params
    thread_id: str
    target: TabTarget | None
    gateway: "BrowserGateway"
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def tool(self) -> str:
        return self.spec.name

    @property
    def tab_id(self) -> int | None:
        return self.target.tab_id if self.target is not None else None

    @property
    def bridge(self):
        return self.gateway.bridge

    @property
    def refs(self):
        return self.gateway.refs

    @property
    def routes(self):
        return self.gateway.routes

    def page_params(self) -> dict[str, Any]:
        """The parameters for the page executor (host-only keys removed)."""
        return content_params(self.params)

    def describe(self) -> str:
        """`click "Save button"`: the tool and the model's description of the target."""
        element = getattr(self.params, "element", None)
        return f"{self.tool} {element!r}" if element else self.tool
