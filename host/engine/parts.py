"""What the engine's parts (a turn, the calls of a turn, the interaction tools, recovery) use of
the `Engine` that owns them and of the turn that runs a call, as Protocols: the parts depend on
this description, not on the classes, so the engine can import its parts without a cycle."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from host.calls.authorize import Authorizer
    from host.calls.router import Router
    from host.engine.events import EventBus
    from host.engine.provider_source import ProviderSource
    from host.engine.records import WaitRow
    from host.engine.store import EngineStore
    from host.engine.waits import Settled, Waits


class TurnContext(Protocol):
    """The turn a call belongs to."""

    engine: "EngineParts"
    run_id: str
    thread_id: str
    turn_id: str
    policy: str | None
    overrides: dict[str, Any]


class EngineParts(Protocol):
    """The engine as its parts see it (see host/engine/engine.py for each member)."""

    store: "EngineStore"
    bus: "EventBus"
    tools: "Router"
    authorizer: "Authorizer"
    gatekeeper: Any
    approvals: "Waits"
    interactions: "Waits"
    providers: "ProviderSource"
    fence_key: bytes
    runners: dict[str, TurnContext]
    clock: Callable[[], float]

    def activity(self, thread_id: str) -> None: ...

    def queue_changed(self, thread_id: str) -> None: ...

    def emit_item(self, thread_id: str, turn_id: str, item_id: str, kind: str, *, text: str = "",
                  notice_kind: str | None = None) -> None: ...

    def offer(self, approval: "WaitRow") -> None: ...

    def approval_resolved(self, approval: "WaitRow", settled: "Settled") -> None: ...

    def offer_interaction(self, row: "WaitRow") -> None: ...

    def interaction_resolved(self, row: "WaitRow", answered: "Settled") -> None: ...

    def approval_timeout_s(self) -> float: ...

    def interaction_timeout_s(self) -> float: ...

    def turn_token_budget(self) -> int | None: ...

    def tool_schemas(self, overrides: dict[str, Any] | None = None) -> list[Any]: ...

    def tool_names(self) -> frozenset[str]: ...
