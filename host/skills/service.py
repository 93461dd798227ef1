"""`SkillTools`: the router service behind `load_skill`, and the Skills section of the model's
instructions. The library lives next to the engine's database (`<db folder>/extensions/`), so a
profile's skills go with its store; it exists once the engine is attached.

`load_skill` is offered only while at least one skill is usable (enabled and as approved): a
user without skills pays no tokens for it.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from host.calls.service import ToolService
from host.skills.model_text import PROMPT_BUDGET, Listing, listing
from host.tools.call import ToolCall
from host.tools.failure import ToolCode, ToolFailure
from host.tools.result import ToolResult, plain_failure
from host.tools.spec import ToolSpec

log = logging.getLogger("tabwarden.skills")
TOOL = "load_skill"
_FRESH_S = 1.0


def library_root(db_path: Path | str) -> Path:
    """Where a store's skills and plugins keep their files: beside the database file (for an
    in-memory store, in the data folder)."""
    if str(db_path) == ":memory:":
        from host.paths import dirs

        return dirs().data / "extensions"
    return Path(db_path).parent / "extensions"


class SkillTools(ToolService):
    """Runs `load_skill` and lists the usable skills for the model."""

    def __init__(self, *, budget: int = PROMPT_BUDGET, clock: Any = time.monotonic):
        self.library: Any = None
        self.plugins: Any = None
        self.budget = budget
        self._clock = clock
        self._cached: tuple[float, Listing] | None = None

    def attach(self, engine: Any) -> None:
        """Open the skill library in the engine's store (call before `engine.start()`; the
        wiring then attaches the plugins, `host.plugins.attach_plugins`)."""
        from host.skills.library import SkillLibrary

        self.library = SkillLibrary(engine.store.db, library_root(engine.store.db.path), clock=engine.clock)
        self.library.listeners.append(self.forget)

    def forget(self) -> None:
        """Drop the cached listing (a skill or plugin changed)."""
        self._cached = None

    def offers(self, spec: ToolSpec) -> bool:
        """The catalog's `load_skill` is offered through `listed` instead, only while skills are usable."""
        return False

    def listing(self) -> Listing:
        """The Skills section as it would be sent now (empty without usable skills)."""
        if self.library is None:
            return Listing("", (), 0)
        now = self._clock()
        # A model step asks twice (tools, instructions): one look at the folders serves both,
        # and an edit on disk is noticed within a second.
        if self._cached is not None and now - self._cached[0] < _FRESH_S:
            return self._cached[1]
        try:
            made = listing(self.library.usable(), self.budget)
        except Exception:
            log.exception("listing the skills failed")
            made = Listing("", (), 0)
        self._cached = (now, made)
        return made

    def listed(self) -> list[ToolSpec]:
        """`load_skill`, while at least one skill is usable."""
        from host.tools.catalog import lookup

        return [lookup(TOOL)] if self.listing().text else []  # type: ignore[list-item]

    def instructions(self) -> str:
        """The Skills section of the model's instructions."""
        return self.listing().text

    def unavailable(self, name: str) -> str | None:
        """Why `load_skill` is not offered: no skill is installed and usable."""
        if name != TOOL:
            return None
        return "no skill is installed and turned on, so there is nothing to load"

    async def run(self, call: ToolCall, runner: Any) -> ToolResult:
        """Run `load_skill`; a refusal comes back as a failed result with its code."""
        try:
            return await runner(call, self)
        except ToolFailure as failure:
            return plain_failure(call.tool, failure)
        except OSError as exc:
            return plain_failure(call.tool, ToolFailure(ToolCode.INTERNAL, f"the skill's files cannot be read: "
                                                        f"{exc.strerror or exc}", details={"dispatched": False}))
