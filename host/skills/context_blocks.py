"""A skill mentioned in the composer (`@price-compare`): the page sends a context block of kind
`skill` naming it, and the host fills it with the skill's instructions, read fresh and checked
against the approved hash. The page never supplies the text, so a block cannot claim a skill's
standing for words of its own.

The filled block is trusted instructions (not fenced) marked with the skill's name and hash,
with provenance `plugin`: what it says is never counted as the user's own words.
"""

from __future__ import annotations

from typing import Any

from host.skills.errors import SkillError
from host.skills.model_text import skill_text
from host.skills.page_state import skill_tools

KIND = "skill"


def _names(blocks: list[dict[str, Any]]) -> list[str]:
    return [str(b.get("label", "")).strip() for b in blocks if b.get("kind") == KIND]


def check_skill_blocks(engine: Any, blocks: list[dict[str, Any]]) -> None:
    """Refuse a submission naming a skill that cannot be used now (SkillError with its code)."""
    names = _names(blocks)
    if not names:
        return
    service = skill_tools(engine)
    if service is None:
        raise SkillError("skill_not_found", "this engine has no skills support")
    for name in names:
        service.library.checked(name)


def resolve_skill_blocks(engine: Any, blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The blocks with every skill block filled with its skill's instructions; a skill that
    cannot be used any more (removed, turned off or changed since the message was queued)
    becomes a short note saying so."""
    if not _names(blocks):
        return blocks
    service = skill_tools(engine)
    return [_filled(service, block) if block.get("kind") == KIND else block for block in blocks]


def _filled(service: Any, block: dict[str, Any]) -> dict[str, Any]:
    name = str(block.get("label", "")).strip()
    base = {"kind": KIND, "label": name[:64], "trust": "trusted", "provenance": "plugin",
            "origin": f"tabwarden://skill/{name[:64]}"}
    try:
        if service is None:
            raise SkillError("skill_not_found", "this engine has no skills support")
        row, bundle = service.library.checked(name)
        text = skill_text(row, bundle, service.library.resources(row))
        return {**base, "sourceRef": f"sha256:{bundle.content_hash}", "content": [{"type": "text", "text": text}]}
    except (SkillError, OSError) as exc:
        note = f"The user attached the skill {name!r}, but it cannot be used now: {exc}"
        return {**base, "content": [{"type": "text", "text": note}]}
