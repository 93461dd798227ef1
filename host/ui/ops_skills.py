"""Skill and plugin ops from the settings page:

    skills.list              → skills.state (read only)
    skills.install           → ack, then skills.state to every page
    skills.setEnabled        → ack, then skills.state to every page
    skills.remove            → ack, then skills.state to every page
    skills.approve           → ack, then skills.state to every page (the pin moves to the shown hash)
    skills.get               → skills.detail
    plugins.review           → plugins.reviewed (staged; nothing is added)
    plugins.install          → ack, then skills.state to every page (the reviewed copy, exactly)
    plugins.remove           → ack, then skills.state to every page
    plugins.setServerEnabled → ack, then skills.state to every page; the server starts or stops

A refusal carries the code of the problem (`skill_exists`, `unsafe_path`, `invalid_manifest`...)
with the file or field at fault, and changes nothing.
"""

from __future__ import annotations

from typing import Any, Callable

from protocol import ui

from host.skills.page_state import broadcast_skills, reviewed, skill_detail, skill_tools, skills_state
from host.ui.client import Client
from host.ui.op_context import OpContext
from host.ui.settings_state import broadcast_settings


def _refused(ctx: OpContext, client: Client, op: Any, mark: str, action: Callable[[Any], Any]) -> Any:
    """Run `action(service)`; a SkillError or storage failure becomes the op's refusal."""
    from host.skills.errors import SkillError
    from host.store.db import StoreError

    service = skill_tools(ctx.engine)
    if service is None:
        return ctx.reject(client, op, mark, "invalid_state", "this engine has no skills support")
    try:
        return action(service)
    except SkillError as exc:
        code = exc.code if exc.code in ui.ERROR_CODES else "invalid_state"
        return ctx.reject(client, op, mark, code, str(exc))
    except StoreError as exc:
        return ctx.reject(client, op, mark, "storage_unavailable", str(exc))


def _changed(ctx: OpContext, client: Client, op: Any, mark: str, action: Callable[[Any], Any]) -> Any:
    def run(service: Any) -> Any:
        action(service)
        response = ctx.commit(client, op, mark, lambda conn: ctx.ack(op))
        broadcast_skills(ctx.engine)
        if ui.tag_of(type(op)).startswith("plugins."):
            broadcast_settings(ctx.engine)  # its rules and site-list entries came or went
        return response

    return _refused(ctx, client, op, mark, run)


def _source(source: ui.BundleSource) -> Any:
    from host.skills.sources import Source

    return Source.from_wire(source.path, source.zip_name, source.zip_data)


def skills_list(ctx: OpContext, client: Client, op: ui.SkillsList, mark: str) -> Any:
    """skills.list: every skill and plugin."""
    return skills_state(ctx.engine, op.submission_id)


def skills_install(ctx: OpContext, client: Client, op: ui.SkillsInstall, mark: str) -> Any:
    """skills.install: one skill from a folder or .zip path, or a .zip the page read."""
    return _changed(ctx, client, op, mark, lambda s: s.library.install(_source(op.source), replace_existing=op.replace))


def skills_set_enabled(ctx: OpContext, client: Client, op: ui.SkillsSetEnabled, mark: str) -> Any:
    """skills.setEnabled: turn a skill on or off."""
    return _changed(ctx, client, op, mark, lambda s: s.library.set_enabled(op.name, op.enabled))


def skills_remove(ctx: OpContext, client: Client, op: ui.SkillsRemove, mark: str) -> Any:
    """skills.remove: remove a skill the user installed."""
    return _changed(ctx, client, op, mark, lambda s: s.library.remove(op.name))


def skills_approve(ctx: OpContext, client: Client, op: ui.SkillsApprove, mark: str) -> Any:
    """skills.approve: use a changed skill again, pinned to the hash the page showed."""
    return _changed(ctx, client, op, mark, lambda s: s.library.approve(op.name, op.content_hash))


def skills_get(ctx: OpContext, client: Client, op: ui.SkillsGet, mark: str) -> Any:
    """skills.get: one skill's instructions and files."""
    return _refused(ctx, client, op, mark, lambda s: skill_detail(ctx.engine, op.submission_id, op.name))


def plugins_review(ctx: OpContext, client: Client, op: ui.PluginsReview, mark: str) -> Any:
    """plugins.review: stage a plugin and say all it would add."""
    return _refused(ctx, client, op, mark,
                    lambda s: reviewed(op.submission_id, s.plugins.review(_source(op.source))))


def plugins_install(ctx: OpContext, client: Client, op: ui.PluginsInstall, mark: str) -> Any:
    """plugins.install: install the reviewed copy."""
    return _changed(ctx, client, op, mark, lambda s: s.plugins.install(op.review_id, op.content_hash))


def plugins_remove(ctx: OpContext, client: Client, op: ui.PluginsRemove, mark: str) -> Any:
    """plugins.remove: uninstall a plugin whole."""
    return _changed(ctx, client, op, mark, lambda s: s.plugins.remove(op.name))


def plugins_set_server_enabled(ctx: OpContext, client: Client, op: ui.PluginsSetServerEnabled, mark: str) -> Any:
    """plugins.setServerEnabled: start or stop one of a plugin's MCP servers."""
    return _changed(ctx, client, op, mark, lambda s: s.plugins.set_server_enabled(op.name, op.server, op.enabled))


def plugins_approve(ctx: OpContext, client: Client, op: ui.PluginsApprove, mark: str) -> Any:
    """plugins.approve: use a plugin whose skills changed on disk again."""
    return _changed(ctx, client, op, mark, lambda s: s.plugins.approve(op.name, op.content_hash))
