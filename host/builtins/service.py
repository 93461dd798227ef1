"""`BuiltinTools`: the tools the host runs itself (their declarations name `builtins`), as one
router service: host-side fetches through the SSRF guard (fetch.py), browser downloads
(downloads.py), the profile's memory (memory.py) and artifacts kept with the thread
(artifacts.py). The runners are in tools.py.

A tool whose target is its destination URL is judged there: resolution normalises the URL,
which is what the gatekeeper judges and what the runner loads. Memory and artifacts live in
the engine's store, so they work once the engine is attached; downloads need a connected
browser.
"""

from __future__ import annotations

import time
from typing import Any, Callable

import msgspec

from host.builtins import memory
from host.builtins.netguard import Resolver, resolver_from_env
from host.builtins.refusals import BuiltinRefused
from host.builtins.settings import load_settings
from host.calls.service import ToolService
from host.gatekeeper.origins import destination
from host.tools.call import Target, ToolCall
from host.tools.failure import ToolCode, ToolFailure
from host.tools.result import ToolResult, plain_failure
from host.tools.spec import ToolSpec

WEB_SCHEMES = ("http", "https")


class BuiltinTools(ToolService):
    """The host's own tools. `bridge` is the extension's (None: no browser, so no downloads);
    `guard` the browser's navigation guard, which judges a download's redirect hops (None: a
    download is refused)."""

    def __init__(self, *, bridge: Any = None, guard: Any = None, resolver: Resolver | None = None,
                 settings: Callable[[], Any] = load_settings, clock: Callable[[], float] = time.time):
        self.bridge = bridge
        self.guard = guard
        self.resolver = resolver or resolver_from_env()
        self.settings = settings
        self.clock = clock
        self.memory: memory.MemoryStore | None = None
        self.engine: Any = None
        # Called after the model changed the memory (open settings pages show it at once).
        self.on_memory_change: Callable[[], None] | None = None

    def attach(self, engine: Any) -> None:
        """The engine these tools serve: memory and artifacts live in its store. Call it before
        `engine.start()` (recovery may resume a run that uses them)."""
        self.engine = engine
        self.memory = memory.MemoryStore(engine.store.db, self.clock)

    def offers(self, spec: ToolSpec) -> bool:
        """Downloads go through the browser: only with one."""
        return spec.target != "destination" or spec.host_fetch or self.bridge is not None

    async def resolve(self, call: ToolCall) -> ToolCall:
        """A URL-bearing built-in acts at its destination: the normalised URL is what the
        gatekeeper judges and what the tool loads. The others have no target."""
        if call.spec.target != "destination":
            return call.resolved(Target())
        dest = destination(call.params.url)
        if dest.valid and not dest.script and dest.scheme not in WEB_SCHEMES:
            raise ToolFailure(ToolCode.INVALID_PARAMS, f"Invalid parameters for {call.tool}: only http(s) URLs, "
                              f"not {dest.scheme}:", phase="validate")
        if not dest.valid or dest.script:
            return call.resolved(Target())
        return call.resolved(Target(origin=dest.origin.text, url=dest.href),
                             msgspec.structs.replace(call.params, url=dest.href))

    async def run(self, call: ToolCall, runner: Any) -> ToolResult:
        """Run a built-in; its refusals come back as `Error <code>: <message>` results."""
        try:
            return await runner(call, self)
        except BuiltinRefused as refused:
            problem = ToolFailure(refused.code, refused.message,
                                  details={**refused.details, "dispatched": refused.dispatched})
            return plain_failure(call.tool, problem)
        except ToolFailure as problem:
            # Most built-in results are trusted: what the browser reported is quoted as data.
            return plain_failure(call.tool, problem.in_own_words())
