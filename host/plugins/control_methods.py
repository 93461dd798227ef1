"""Control-socket methods for skills and plugins (the REPL's `tw.skills`, and `tabwarden skill`
and `tabwarden plugin` while a host runs):

    skills.list      {}                              -> {skills, plugins, promptChars, promptBudget, unlisted}
    skills.add       {path, replace?}                -> the installed skill {name, contentHash, ...}
    skills.show      {name}                          -> its instructions, files and status
    skills.enable    {name, enabled}                 -> {name, enabled}
    skills.remove    {name}                          -> {removed}
    skills.approve   {name, content_hash}            -> {name, contentHash}: the changed files are used again
    plugins.review   {path}                          -> everything it would add, with reviewId and contentHash
    plugins.install  {review_id, content_hash}       -> {name, skills, servers}
    plugins.remove   {name}                          -> {removed}
    plugins.server   {name, server, enabled}         -> {name, server, enabled}
    plugins.approve  {name, content_hash}            -> {name, contentHash}

A refusal carries the problem's code (`skill_exists`, `unsafe_path`, `invalid_manifest`...) in
`details.reason` and changes nothing. Every change is sent to open settings pages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Callable

import msgspec

from protocol.errors import ErrorCode
from host.control.engine_access import running_engine as _engine
from host.control.params import parse_params as _params

if TYPE_CHECKING:
    from host.control.server import ControlConnection, ControlServer

Name = Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
Path_ = Annotated[str, msgspec.Meta(min_length=1, max_length=4096)]
Hash = Annotated[str, msgspec.Meta(min_length=64, max_length=64, pattern="^[0-9a-f]{64}$")]


class _Nothing(msgspec.Struct, forbid_unknown_fields=True):
    pass


class _Add(msgspec.Struct, forbid_unknown_fields=True):
    path: Path_
    replace: bool = False


class _Name(msgspec.Struct, forbid_unknown_fields=True):
    name: Name


class _Enable(msgspec.Struct, forbid_unknown_fields=True):
    name: Name
    enabled: bool


class _Approve(msgspec.Struct, forbid_unknown_fields=True):
    name: Name
    content_hash: Hash


class _Path(msgspec.Struct, forbid_unknown_fields=True):
    path: Path_


class _Install(msgspec.Struct, forbid_unknown_fields=True):
    review_id: Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
    content_hash: Hash


class _Server(msgspec.Struct, forbid_unknown_fields=True):
    name: Name
    server: Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
    enabled: bool


def _service(conn: "ControlConnection") -> Any:
    from host.control.server import ControlError
    from host.skills.page_state import skill_tools

    service = skill_tools(_engine(conn))
    if service is None or service.plugins is None:
        raise ControlError(ErrorCode.NOT_READY, "this host has no skills support", {})
    return service


def _run(conn: "ControlConnection", action: Callable[[Any], Any], *, changes: bool = True) -> Any:
    from host.control.server import ControlError
    from host.skills.errors import SkillError
    from host.skills.page_state import broadcast_skills
    from host.store.db import StoreError

    service = _service(conn)
    try:
        answer = action(service)
    except SkillError as exc:
        raise ControlError(ErrorCode.INVALID_MESSAGE, str(exc), {"reason": exc.code, "where": exc.where}) from None
    except StoreError as exc:
        raise ControlError(ErrorCode.INTERNAL, f"storage failed, nothing changed: {exc}", {}) from None
    if changes:
        broadcast_skills(_engine(conn))
        from host.ui.settings_state import broadcast_settings

        broadcast_settings(_engine(conn))  # a plugin's rules and site-list entries show there
    return answer


async def skills_list(params: dict[str, Any], conn: "ControlConnection") -> Any:
    """Every skill and plugin, with the listing's cost."""
    from host.plugins.actions import overview

    _params(_Nothing, params)
    return _run(conn, lambda s: overview(s.library, s.plugins, s.budget), changes=False)


async def skills_add(params: dict[str, Any], conn: "ControlConnection") -> Any:
    """Install a skill from a folder or .zip path."""
    from host.plugins.actions import add_skill

    p = _params(_Add, params)
    return _run(conn, lambda s: add_skill(s.library, p.path, replace=p.replace))


async def skills_show(params: dict[str, Any], conn: "ControlConnection") -> Any:
    """One skill's instructions, files and status."""
    from host.plugins.actions import show_skill

    p = _params(_Name, params)
    return _run(conn, lambda s: show_skill(s.library, p.name), changes=False)


async def skills_enable(params: dict[str, Any], conn: "ControlConnection") -> Any:
    """Turn a skill on or off."""
    p = _params(_Enable, params)
    return _run(conn, lambda s: {"name": s.library.set_enabled(p.name, p.enabled).name, "enabled": p.enabled})


async def skills_remove(params: dict[str, Any], conn: "ControlConnection") -> Any:
    """Remove a skill the user installed."""
    p = _params(_Name, params)
    return _run(conn, lambda s: (s.library.remove(p.name), {"removed": p.name})[1])


async def skills_approve(params: dict[str, Any], conn: "ControlConnection") -> Any:
    """Use a changed skill again, pinned to the given hash."""
    p = _params(_Approve, params)
    return _run(conn, lambda s: {"name": p.name, "contentHash": s.library.approve(p.name, p.content_hash).content_hash})


async def plugins_review(params: dict[str, Any], conn: "ControlConnection") -> Any:
    """Stage a plugin and say everything it would add."""
    from host.plugins.actions import review_plugin

    p = _params(_Path, params)
    return _run(conn, lambda s: review_plugin(s.plugins, p.path), changes=False)


async def plugins_install(params: dict[str, Any], conn: "ControlConnection") -> Any:
    """Install a reviewed plugin."""
    from host.plugins.actions import install_plugin

    p = _params(_Install, params)
    return _run(conn, lambda s: install_plugin(s.plugins, p.review_id, p.content_hash))


async def plugins_remove(params: dict[str, Any], conn: "ControlConnection") -> Any:
    """Uninstall a plugin whole."""
    p = _params(_Name, params)
    return _run(conn, lambda s: (s.plugins.remove(p.name), {"removed": p.name})[1])


async def plugins_server(params: dict[str, Any], conn: "ControlConnection") -> Any:
    """Start or stop one of a plugin's MCP servers."""
    p = _params(_Server, params)
    return _run(conn, lambda s: (s.plugins.set_server_enabled(p.name, p.server, p.enabled),
                                 {"name": p.name, "server": p.server, "enabled": p.enabled})[1])


async def plugins_approve(params: dict[str, Any], conn: "ControlConnection") -> Any:
    """Use a plugin whose files changed again, pinned to the given hash."""
    p = _params(_Approve, params)
    return _run(conn, lambda s: {"name": p.name, "contentHash": s.plugins.approve(p.name, p.content_hash).content_hash})


def register(server: "ControlServer") -> None:
    """Serve the skills' and plugins' methods on `server`."""
    for name, method in (("skills.list", skills_list), ("skills.add", skills_add), ("skills.show", skills_show),
                         ("skills.enable", skills_enable), ("skills.remove", skills_remove),
                         ("skills.approve", skills_approve), ("plugins.review", plugins_review),
                         ("plugins.install", plugins_install), ("plugins.remove", plugins_remove),
                         ("plugins.server", plugins_server), ("plugins.approve", plugins_approve)):
        server.register(name, method)
