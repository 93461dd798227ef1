"""`tabwarden skill ...` and `tabwarden plugin ...`: install, list, check and remove skills and
plugins from the command line.

With a host running, the change goes through it (open settings pages follow, and a plugin's
rules are in force at once); without one, it is made in the profile's store directly and the
host applies it when it starts. A plugin is always shown whole before it is installed: `plugin
add` prints the review and asks, or installs without asking with `--yes`.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

SKILL_ACTIONS = ("list", "add", "show", "enable", "disable", "approve", "remove")
PLUGIN_ACTIONS = ("list", "review", "add", "server", "approve", "remove")


def add_arguments(parser: argparse.ArgumentParser, name: str) -> None:
    sub = parser.add_subparsers(dest="action", required=True)
    if name == "skill":
        sub.add_parser("list", help="installed skills and plugins, each against its approved hash")
        add = sub.add_parser("add", help="install a skill from a folder holding SKILL.md, or a .zip of one")
        add.add_argument("path")
        add.add_argument("--replace", action="store_true", help="replace an installed skill of the same name")
        for action, what in (("show", "print a skill's instructions and files"), ("enable", "turn a skill on"),
                             ("disable", "turn a skill off"), ("remove", "remove a skill you installed")):
            sub.add_parser(action, help=what).add_argument("name")
        approve = sub.add_parser("approve", help="use a skill whose files changed on disk again")
        approve.add_argument("name")
        approve.add_argument("hash", nargs="?", help="the new hash `list` shows (default: the files as they are now)")
    else:
        sub.add_parser("list", help="installed plugins (and skills)")
        sub.add_parser("review", help="show everything a plugin would add; adds nothing").add_argument("path")
        add = sub.add_parser("add", help="review a plugin, then install it")
        add.add_argument("path")
        add.add_argument("--yes", action="store_true", help="install without asking (the review is still printed)")
        server = sub.add_parser("server", help="turn one of a plugin's MCP servers on or off")
        server.add_argument("name")
        server.add_argument("server")
        server.add_argument("state", choices=("on", "off"))
        approve = sub.add_parser("approve", help="use a plugin whose files changed on disk again")
        approve.add_argument("name")
        approve.add_argument("hash", nargs="?")
        sub.add_parser("remove", help="uninstall a plugin and everything it added").add_argument("name")


def run(args: argparse.Namespace) -> int:
    from host.repl.style import Style
    from host.skills.errors import SkillError
    from host.store.db import StoreError

    style = Style()
    try:
        return asyncio.run(_run(args, style))
    except SkillError as exc:
        print(f"tabwarden {args.command}: {exc.code}: {exc}", file=sys.stderr)
        return 1
    except StoreError as exc:
        print(f"tabwarden {args.command}: storage failed, nothing changed: {exc}", file=sys.stderr)
        return 1


async def _run(args: argparse.Namespace, style: Any) -> int:
    client = await _running_host()
    target = _Live(client) if client is not None else _Offline()
    try:
        return await _act(args, target, style)
    finally:
        if client is not None:
            await client.close()


async def _act(args: argparse.Namespace, target: Any, style: Any) -> int:
    from host.repl import skills_view

    action, kind = args.action, args.command
    if action == "list":
        print(skills_view.overview(await target.call("skills.list"), style))
    elif kind == "skill" and action == "add":
        added = await target.call("skills.add", path=args.path, replace=args.replace)
        print(f"installed {added['name']} ({added['files']} files, sha256 {added['contentHash'][:16]})"
              + ("; it has scripts/, which Tabwarden never runs" if added.get("hasScripts") else ""))
    elif action == "show":
        print(skills_view.skill(await target.call("skills.show", name=args.name), style))
    elif action in ("enable", "disable"):
        await target.call("skills.enable", name=args.name, enabled=action == "enable")
        print(f"{args.name} is {'on' if action == 'enable' else 'off'}")
    elif action == "approve":
        return await _approve(args, target)
    elif action == "remove":
        await target.call(f"{'skills' if kind == 'skill' else 'plugins'}.remove", name=args.name)
        print(f"removed {args.name}" + (" and everything it added" if kind == "plugin" else ""))
    elif action in ("review", "add"):
        return await _plugin_add(args, target, style)
    elif action == "server":
        await target.call("plugins.server", name=args.name, server=args.server, enabled=args.state == "on")
        print(f"{args.name}'s MCP server {args.server} is {args.state}")
    return 0


async def _approve(args: argparse.Namespace, target: Any) -> int:
    if args.command == "skill":
        shown = await target.call("skills.show", name=args.name)
        wanted = args.hash or shown.get("currentHash") or shown["contentHash"]
        await target.call("skills.approve", name=args.name, content_hash=wanted)
    else:
        wanted = args.hash or await target.plugin_hash(args.name)
        await target.call("plugins.approve", name=args.name, content_hash=wanted)
    print(f"{args.name} is used again at sha256 {wanted[:16]}")
    return 0


async def _plugin_add(args: argparse.Namespace, target: Any, style: Any) -> int:
    from host.repl import skills_view

    seen = await target.call("plugins.review", path=args.path)
    print(skills_view.review(seen, style))
    if args.action == "review":
        return 0
    if not args.yes:
        if not sys.stdin.isatty():
            print(f"tabwarden plugin: not installed; run again with --yes to install {seen['name']} as shown",
                  file=sys.stderr)
            return 2
        if input(f"Install {seen['name']}? [y/N] ").strip().lower() not in ("y", "yes"):
            print("not installed")
            return 1
    done = await target.call("plugins.install", review_id=seen["reviewId"], content_hash=seen["contentHash"])
    print(f"installed plugin {done['name']}" + (f" (skills: {', '.join(done['skills'])})" if done["skills"] else "")
          + (f"; its MCP servers ({', '.join(done['servers'])}) are off until you turn them on" if done["servers"] else ""))
    return 0


async def _running_host() -> Any:
    """A control client of the newest running host, or None when none answers."""
    from host.control.client import ControlClient
    from host.control.discovery import running_hosts

    if not running_hosts():
        return None
    try:
        return await ControlClient.connect(client="cli")
    except Exception:
        return None


class _Live:
    """Changes through the running host's control methods (refusals back as SkillError)."""

    def __init__(self, client: Any):
        self.client = client

    async def call(self, method: str, **params: Any) -> Any:
        from host.skills.errors import SkillError
        from host.transport.errors import RequestError

        try:
            return await self.client.call(method, **params)
        except RequestError as exc:
            info = getattr(exc, "info", None)
            details = (getattr(info, "details", None) or {}) if info is not None else {}
            code = details.get("reason") or getattr(info, "code", "error")
            raise SkillError(code, getattr(info, "message", str(exc)), details.get("where")) from None

    async def plugin_hash(self, name: str) -> str:
        listed = await self.call("skills.list")
        for plugin in listed["plugins"]:
            if plugin["name"] == name:
                return plugin.get("currentHash") or plugin["contentHash"]
        from host.plugins.errors import PLUGIN_NOT_FOUND, PluginError

        raise PluginError(PLUGIN_NOT_FOUND, f"no plugin named {name!r} is installed")


class _Offline:
    """Changes made in the profile's store directly (no host runs)."""

    def __init__(self) -> None:
        from host.plugins.installer import Plugins
        from host.skills.library import SkillLibrary
        from host.skills.model_text import PROMPT_BUDGET
        from host.skills.service import library_root
        from host.store.db import Store

        store = Store()
        self.library = SkillLibrary(store, library_root(store.path))
        self.plugins = Plugins(self.library, None)
        self.budget = PROMPT_BUDGET

    async def call(self, method: str, **p: Any) -> Any:
        from host.plugins import actions

        lib, plugins = self.library, self.plugins
        table = {
            "skills.list": lambda: actions.overview(lib, plugins, self.budget),
            "skills.add": lambda: actions.add_skill(lib, p.get("path", ""), replace=p.get("replace", False)),
            "skills.show": lambda: actions.show_skill(lib, p.get("name", "")),
            "skills.enable": lambda: lib.set_enabled(p["name"], p["enabled"]),
            "skills.approve": lambda: lib.approve(p["name"], p["content_hash"]),
            "skills.remove": lambda: lib.remove(p["name"]),
            "plugins.review": lambda: actions.review_plugin(plugins, p["path"]),
            "plugins.install": lambda: actions.install_plugin(plugins, p["review_id"], p["content_hash"]),
            "plugins.remove": lambda: plugins.remove(p["name"]),
            "plugins.server": lambda: plugins.set_server_enabled(p["name"], p["server"], p["enabled"]),
            "plugins.approve": lambda: plugins.approve(p["name"], p["content_hash"]),
        }
        return table[method]()

    async def plugin_hash(self, name: str) -> str:
        from host.skills.bundle import check_folder
        from host.skills.limits import PLUGIN_LIMITS

        row = self.plugins.get(name)
        return check_folder(self.library.root / row.folder, PLUGIN_LIMITS)[1]
