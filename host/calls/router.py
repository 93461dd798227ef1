"""`Router`: sends every call to the service its declaration names (`ToolSpec.runner`).

    router = Router({"browser": browser, "builtins": builtins, "mcp": mcp, "interactions": waits})
    call = router.decode(thread_id, "click", {"element": "Buy", "ref": "s1_2_3"})
    held = await router.locate(call)           # its tab, to hold before it is resolved
    async with router.hold(held):               # the tab's queue (and its guard, for a write)
        call = await router.resolve(held)       # the target, as the gatekeeper judges it
        result = await router.run(call)         # the declared runner, by its service

Runners are named by path in the declarations and imported on first use, so declaring a tool
never imports the code that runs it.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import Mapping
from typing import Any, AsyncContextManager

from host.calls.service import ToolService
from host.tools.call import MAX_THREAD_ID, ToolCall
from host.tools import catalog
from host.tools.failure import ToolCode, ToolFailure
from host.tools.params import decode
from host.tools.quoting import quoted
from host.tools.result import ToolResult, failure
from host.tools.spec import Runner, ToolSpec

log = logging.getLogger("tabwarden.calls")

_RUNNERS: dict[Runner, Any] = {}


def load_runner(runner: Runner) -> Any:
    """The object `runner` names (`module:attribute`), imported once."""
    found = _RUNNERS.get(runner)
    if found is None:
        module, _, name = runner.function.partition(":")
        found = _RUNNERS[runner] = getattr(importlib.import_module(module), name)
    return found


class Router:
    """The tools of one host, by service."""

    def __init__(self, services: Mapping[str, ToolService]):
        self.services = dict(services)
        self._catalog_offered: list[ToolSpec] | None = None

    def add(self, name: str, service: ToolService) -> None:
        """Register `service` under `name` (the name declarations use), unless one is there."""
        if name not in self.services:
            self.services[name] = service
            self._catalog_offered = None

    # -- what is offered -----------------------------------------------------------------------

    def offered(self) -> list[ToolSpec]:
        """Every tool the model may call now: the catalog's whose service is here and offers them
        (a service's answer is fixed once it is registered), then the tools services list at run
        time (MCP servers')."""
        if self._catalog_offered is None:
            self._catalog_offered = [spec for spec in catalog.CATALOG.values() if self._service_for(spec) is not None
                                     and self._service_for(spec).offers(spec)]  # type: ignore[union-attr]
        specs = list(self._catalog_offered)
        for service in self.services.values():
            specs.extend(service.listed())
        return specs

    def instructions(self) -> str:
        """What the services add to the model's instructions, after the kernel prompt."""
        return "".join(service.instructions() for service in self.services.values())

    def offered_names(self) -> frozenset[str]:
        """The names of `offered()`."""
        return frozenset(spec.name for spec in self.offered())

    def unavailable(self, name: str) -> str | None:
        """Why a tool that is not offered now cannot be called, if a service knows (an MCP
        server that is down); None for a name no service knows."""
        for service in self.services.values():
            why = service.unavailable(name)
            if why is not None:
                return why
        return None

    async def revive(self, name: str) -> None:
        """Let the services try once more to offer `name` (an MCP server back since the turn
        started); never raises."""
        for service in self.services.values():
            try:
                await service.revive(name)
            except Exception:
                log.exception("reviving %s failed", name)

    # -- one call ------------------------------------------------------------------------------

    def decode(self, thread_id: str, tool: str, params: Any) -> ToolCall:
        """Validate a call's name and parameters (MCP parameters are checked by their service at
        resolution). Raises ToolFailure `unknown_tool` / `invalid_params`; sends nothing."""
        spec = catalog.lookup(tool) if isinstance(tool, str) else None
        if spec is None:
            raise ToolFailure(ToolCode.UNKNOWN_TOOL, f"there is no tool named {tool!r}{catalog.unknown_name_hint(tool)}",
                              phase="validate",
                              details={"dispatched": False})
        if self._service_for(spec) is None:
            raise ToolFailure(ToolCode.UNSUPPORTED, f"{spec.name} is a {spec.level} tool this host cannot run",
                              phase="validate", details={"dispatched": False})
        if not isinstance(thread_id, str) or not 1 <= len(thread_id) <= MAX_THREAD_ID:
            raise ToolFailure(ToolCode.INVALID_PARAMS, f"thread id must be 1..{MAX_THREAD_ID} characters",
                              phase="validate")
        if spec.params_type is None:
            if params is not None and not isinstance(params, dict):
                raise ToolFailure(ToolCode.INVALID_PARAMS, f"Invalid parameters for {spec.name}: expected an "
                                  f"object, got {type(params).__name__}", phase="validate")
            return ToolCall(spec, dict(params or {}), thread_id)
        return ToolCall(spec, decode(spec, params), thread_id)

    async def resolve(self, call: ToolCall) -> ToolCall:
        """The call on its target as it is now (its service decides what that means). The runner
        is imported here, so that nothing slow stands between the final check and the run."""
        service = self._service(call.spec)
        load_runner(call.spec.runner)  # type: ignore[arg-type]
        return await service.resolve(call)

    async def locate(self, call: ToolCall) -> ToolCall:
        """The call placed where `hold` needs it (its tab), before it is resolved; never judged."""
        return await self._service(call.spec).locate(call)

    def holds_quietly(self, call: ToolCall) -> bool:
        """Whether the located call may be held before it is judged (see ToolService)."""
        return self._service(call.spec).holds_quietly(call)

    def hold(self, call: ToolCall) -> AsyncContextManager[Any]:
        """What the final resolution, the dispatch-phase check and the run happen under."""
        return self._service(call.spec).hold(call)

    async def run(self, call: ToolCall) -> ToolResult:
        """Run a resolved, authorised call with its declared runner. Failures come back as a
        ToolResult; a bug in a runner too (the call may have acted: it is never replayed)."""
        spec = call.spec
        try:
            return await self._service(spec).run(call, load_runner(spec.runner))  # type: ignore[arg-type]
        except asyncio.CancelledError:
            raise
        except ToolFailure as problem:
            return failure(call.tool, problem, tab_id=call.tab_id)
        except Exception as exc:
            log.exception("tool %s failed", call.tool)
            # An exception's text may hold whatever the runner was handling (a server's answer,
            # the browser's): quoted as data, since a built-in's failure is read unfenced.
            return failure(call.tool, ToolFailure(ToolCode.INTERNAL, f"internal error: {type(exc).__name__}: "
                                                  f"{quoted(str(exc))}",
                                                  phase="execute", details={"dispatched": True,
                                                                            "effectMayHaveOccurred": True}),
                           tab_id=call.tab_id)

    # -- turns ---------------------------------------------------------------------------------

    def begin_turn(self, thread_id: str, tab_id: int | None, *, bound: bool) -> None:
        """A turn starts, for every service."""
        for service in self.services.values():
            service.begin_turn(thread_id, tab_id, bound=bound)

    def end_turn(self, thread_id: str) -> None:
        """A turn ended, for every service."""
        for service in self.services.values():
            service.end_turn(thread_id)

    def hand_over(self, thread_id: str) -> None:
        """The run waits on the user, for every service."""
        for service in self.services.values():
            service.hand_over(thread_id)

    async def refresh(self, thread_id: str) -> None:
        """A turn starts: services fetch the tools that come from elsewhere."""
        for service in self.services.values():
            await service.refresh(thread_id)

    async def aclose(self) -> None:
        """The host closes: every service releases its connections."""
        for service in self.services.values():
            await service.aclose()

    # -- helpers -------------------------------------------------------------------------------

    def _service_for(self, spec: ToolSpec) -> ToolService | None:
        return self.services.get(spec.runner.service) if spec.runner is not None else None

    def _service(self, spec: ToolSpec) -> ToolService:
        service = self._service_for(spec)
        if service is None:
            raise ToolFailure(ToolCode.UNSUPPORTED, f"{spec.name} cannot run on this host", phase="validate",
                              details={"dispatched": False})
        return service
