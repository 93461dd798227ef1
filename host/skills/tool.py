"""The `load_skill` runner: a skill's instructions, or one file of its references/ or assets/,
read fresh from disk and refused when the files differ from what the user approved."""

from __future__ import annotations

from typing import TYPE_CHECKING

from host.skills.errors import SkillError
from host.skills.model_text import resource_text, skill_text
from host.tools.call import ToolCall
from host.tools.failure import ToolCode, ToolFailure
from host.tools.result import ToolResult

if TYPE_CHECKING:
    from host.skills.service import SkillTools


async def load_skill(call: ToolCall, skills: "SkillTools") -> ToolResult:
    """Return the named skill's body (or one resource) marked with its name and content hash."""
    library = skills.library
    if library is None:
        raise ToolFailure(ToolCode.UNAVAILABLE, "skills cannot be used before the engine is attached",
                          details={"dispatched": False})
    params = call.params
    try:
        if params.resource is None:
            row, bundle = library.checked(params.name)
            text = skill_text(row, bundle, library.resources(row))
        else:
            row, bundle, body = library.resource(params.name, params.resource)
            text = resource_text(row, bundle, params.resource, body)
    except SkillError as exc:
        if exc.code == "skill_not_found":
            usable = ", ".join(r.name for r in library.usable()) or "none"
            exc = SkillError(exc.code, f"no skill named {params.name!r} is installed; the skills in use are: {usable}")
        raise ToolFailure(exc.code, exc.message, details={"dispatched": False, "where": exc.where}) from None
    return ToolResult(ok=True, tool=call.tool, text=text,
                      details={"skill": row.name, "contentHash": bundle.content_hash, "resource": params.resource})
