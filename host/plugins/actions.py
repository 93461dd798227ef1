"""What the REPL and the CLI do with skills and plugins, as plain JSON answers: the same
functions serve the control methods of a running host and `tabwarden skill|plugin` when no host
runs (then a plugin's rules take effect when the host starts). Failures leave as SkillError /
PluginError with their codes; nothing is half done."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from host.plugins.installer import Plugins, Review
from host.skills.library import SkillLibrary
from host.skills.model_text import listing
from host.skills.sources import Source


def _source(path: str) -> Source:
    return Source(path=str(Path(path).expanduser().absolute()))


def overview(library: SkillLibrary, plugins: Plugins, budget: int) -> dict[str, Any]:
    """Every skill (with its status against its pin) and plugin, and what the listing costs."""
    from host.skills.page_state import plugin_entry, skill_entry

    made = listing(library.usable(), budget)
    statuses = library.statuses()
    changed = {s.row.plugin for s in statuses if s.row.plugin and s.checked.status != "ok"}
    return {
        "skills": [msgspec.to_builtins(skill_entry(s, s.row.name in made.listed)) for s in statuses],
        "plugins": [msgspec.to_builtins(plugin_entry(row, library, row.name in changed))
                    for row in plugins.storage.plugins()],
        "promptChars": len(made.text), "promptBudget": budget, "unlisted": made.unlisted,
    }


def add_skill(library: SkillLibrary, path: str, *, replace: bool = False) -> dict[str, Any]:
    """Install one skill from a folder or .zip path."""
    row = library.install(_source(path), replace_existing=replace)
    return {"name": row.name, "description": row.description, "contentHash": row.content_hash, "files": row.files,
            "size": row.size, "hasScripts": row.has_scripts}


def show_skill(library: SkillLibrary, name: str) -> dict[str, Any]:
    """A skill's instructions and files as they are on disk now."""
    row = library.get(name)
    status = library.status(row, fresh=True)
    bundle = status.checked.current
    return {"name": row.name, "status": status.checked.status, "enabled": row.enabled, "plugin": row.plugin,
            "contentHash": row.content_hash, "currentHash": status.checked.current_hash,
            "changedFiles": list(status.checked.changed_files), "problem": status.checked.problem,
            "body": bundle.doc.body if bundle is not None else None,
            "files": [{"path": f.path, "size": f.size} for f in bundle.files] if bundle is not None else []}


def review_wire(review: Review) -> dict[str, Any]:
    """A staged plugin's review as JSON (what `plugins.reviewed` carries)."""
    from host.skills.page_state import reviewed

    return msgspec.to_builtins(reviewed("review", review))


def review_plugin(plugins: Plugins, path: str) -> dict[str, Any]:
    """Stage a plugin from a folder or .zip path and say all it would add."""
    return review_wire(plugins.review(_source(path)))


def install_plugin(plugins: Plugins, review_id: str, content_hash: str) -> dict[str, Any]:
    """Install a reviewed plugin."""
    row = plugins.install(review_id, content_hash)
    return {"name": row.name, "contentHash": row.content_hash,
            "skills": [s.name for s in plugins.storage.skills() if s.plugin == row.name],
            "servers": sorted(row.server_enabled)}
