"""Skills and plugins as pages see them (`skills.state`, `skills.detail`, `plugins.reviewed`),
and sending the state to every page after a change (a page's, the REPL's or the CLI's)."""

from __future__ import annotations

from typing import Any

from protocol import ui


def skill_tools(engine: Any) -> Any:
    """The engine's skills service (None when the host has none, or it is not attached)."""
    service = engine.tools.services.get("skills")
    return service if service is not None and service.library is not None else None


def skills_state(engine: Any, submission_id: str | None = None) -> ui.SkillsState:
    """Every installed skill and plugin against its pin, and what the listing costs."""
    service = skill_tools(engine)
    if service is None:
        return ui.SkillsState(submission_id=submission_id)
    made = service.listing()
    listed = set(made.listed)
    skills = [skill_entry(status, status.row.name in listed) for status in service.library.statuses()]
    changed = {s.plugin for s in skills if s.plugin and s.status != "ok"}
    plugins = [plugin_entry(row, service.library, row.name in changed) for row in service.plugins.storage.plugins()]
    return ui.SkillsState(submission_id=submission_id, skills=skills, plugins=plugins, prompt_chars=len(made.text),
                          prompt_budget=service.budget, unlisted=made.unlisted)


def skill_entry(status: Any, listed: bool) -> ui.SkillEntry:
    """A skill as pages see it (`listed`: named in the model's instructions now)."""
    row, checked = status.row, status.checked
    return ui.SkillEntry(name=row.name, description=row.description, enabled=row.enabled,
                         status=checked.status,  # type: ignore[arg-type]
                         content_hash=row.content_hash,
                         current_hash=checked.current_hash if checked.status == "changed" else None,
                         changed_files=list(checked.changed_files), problem=checked.problem, plugin=row.plugin,
                         source=row.source, files=row.files, size=row.size, has_scripts=row.has_scripts,
                         listed=listed and status.usable, installed_at=row.installed_at, updated_at=row.updated_at)


def plugin_entry(row: Any, library: Any, skills_changed: bool) -> ui.PluginEntry:
    """A plugin as pages see it; `skills_changed`: one of its skills differs from its pin (the
    plugin's files are then hashed, for the approval to name)."""
    manifest = row.manifest
    skills = [s.name for s in library.storage.skills() if s.plugin == row.name]
    status, current, problem = "ok", None, None
    if skills_changed:
        from host.skills.bundle import check_folder
        from host.skills.errors import SkillError
        from host.skills.limits import PLUGIN_LIMITS

        try:
            status, current = "changed", check_folder(library.root / row.folder, PLUGIN_LIMITS)[1]
        except (SkillError, OSError) as exc:
            status, problem = "broken", str(exc)
    return ui.PluginEntry(
        name=row.name, version=manifest.get("version", ""), description=manifest.get("description", ""),
        author=manifest.get("author", ""), homepage=manifest.get("homepage", ""),
        status=status, current_hash=current, problem=problem,  # type: ignore[arg-type]
        content_hash=row.content_hash, skills=skills,
        servers=[ui.PluginServer(id=s, url=str(body.get("url", "")), enabled=bool(row.server_enabled.get(s)))
                 for s, body in sorted(manifest.get("servers", {}).items())],
        rules=[ui.PluginRuleEntry(tool=r["tool"], origin=r["origin"], verdict=r["verdict"])
               for r in manifest.get("rules", [])],
        guarded=list(manifest.get("guarded", [])), blocked=list(manifest.get("blocked", [])), source=row.source,
        installed_at=row.installed_at)


def skill_detail(engine: Any, submission_id: str, name: str) -> ui.SkillDetail:
    """One skill's instructions and files as they are on disk now (raises SkillError)."""
    library = skill_tools(engine).library
    row = library.get(name)
    bundle = library.status(row, fresh=True).checked.current
    if bundle is None:
        from host.skills.errors import SkillError

        raise SkillError("skill_broken", f"the skill {name!r} cannot be read")
    return ui.SkillDetail(submission_id=submission_id, name=row.name, description=bundle.doc.description,
                          body=bundle.doc.body, content_hash=bundle.content_hash,
                          files=[ui.SkillFile(path=f.path, size=f.size) for f in bundle.files])


def reviewed(submission_id: str, review: Any) -> ui.PluginReviewed:
    """What installing a staged plugin would add (see `Plugins.review`)."""
    manifest = review.manifest
    return ui.PluginReviewed(
        submission_id=submission_id, review_id=review.id, content_hash=review.content_hash, name=manifest.name,
        version=manifest.version, description=manifest.description, author=manifest.author,
        homepage=manifest.homepage,
        skills=[ui.ReviewedSkill(name=b.doc.name, description=b.doc.description, has_scripts=b.has_scripts)
                for b in review.skills],
        servers=[ui.PluginServer(id=s, url=str(body.get("url", "")), enabled=False)
                 for s, body in sorted(manifest.servers.items())],
        rules=[ui.PluginRuleEntry(tool=r["tool"], origin=r["origin"], verdict=r["verdict"]) for r in manifest.rules],
        guarded=list(manifest.guarded), blocked=list(manifest.blocked), replaces=review.replaces)


def broadcast_skills(engine: Any) -> None:
    """Send every page the skills and plugins as they are now."""
    engine.bus.broadcast(skills_state(engine))
