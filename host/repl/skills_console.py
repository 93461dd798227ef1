"""`tw.skills`: the skills and plugins of the running host, from the REPL.

    await tw.skills.list()                       what is installed, and each one's status
    await tw.skills.add("~/skills/pdf-forms")    install a skill (folder or .zip); replace=True over one
    await tw.skills.show("pdf-forms")            its instructions and files
    await tw.skills.enable("pdf-forms", False)   turn it off (True: on)
    await tw.skills.approve("pdf-forms")         use its changed files (the hash shown by list)
    await tw.skills.remove("pdf-forms")
    await tw.skills.review_plugin(path)          everything a plugin would add (nothing is added)
    await tw.skills.install_plugin(path)         review, then install that exact copy
    await tw.skills.plugin_server(name, server, True)
    await tw.skills.remove_plugin(name)
"""

from __future__ import annotations

from typing import Any

from host.repl import skills_view
from host.repl.style import Style
from host.repl.views import Text, View


class SkillsConsole:
    """The `tw.skills` namespace over a control client."""

    def __init__(self, tw: Any):
        self._tw = tw

    def __repr__(self) -> str:
        return "<tw.skills: list() add(path) show(name) enable(name, on) approve(name) remove(name) " \
               "review_plugin(path) install_plugin(path) plugin_server(name, server, on) remove_plugin(name)>"

    @property
    def _style(self) -> Style:
        return self._tw.style

    async def _call(self, method: str, **params: Any) -> Any:
        return await self._tw.client.call(method, **params)

    def _said(self, text: str) -> Text:
        return Text(text)

    async def list(self) -> View:
        """Installed skills and plugins, each against its pin."""
        return View(await self._call("skills.list"), skills_view.overview, self._style)

    async def add(self, path: str, *, replace: bool = False) -> Text:
        """Install a skill from a folder or .zip path."""
        added = await self._call("skills.add", path=path, replace=replace)
        return self._said(f"installed {added['name']} ({added['files']} files, sha256 {added['contentHash'][:16]})")

    async def show(self, name: str) -> View:
        """One skill's instructions and files."""
        return View(await self._call("skills.show", name=name), skills_view.skill, self._style)

    async def enable(self, name: str, on: bool = True) -> Text:
        """Turn a skill on or off."""
        await self._call("skills.enable", name=name, enabled=on)
        return self._said(f"{name} is {'on' if on else 'off'}")

    async def approve(self, name: str, content_hash: str | None = None) -> Text:
        """Use a changed skill again; without a hash, the one `list` shows for it now."""
        if content_hash is None:
            shown = await self._call("skills.show", name=name)
            content_hash = shown.get("currentHash") or shown["contentHash"]
        await self._call("skills.approve", name=name, content_hash=content_hash)
        return self._said(f"{name} is used again at sha256 {content_hash[:16]}")

    async def remove(self, name: str) -> Text:
        """Remove a skill you installed."""
        await self._call("skills.remove", name=name)
        return self._said(f"removed {name}")

    async def review_plugin(self, path: str) -> View:
        """Everything a plugin would add; nothing is added."""
        return View(await self._call("plugins.review", path=path), skills_view.review, self._style)

    async def install_plugin(self, path: str) -> Text:
        """Review the plugin, print the review, and install exactly that copy."""
        seen = await self._call("plugins.review", path=path)
        print(skills_view.review(seen, self._style))
        done = await self._call("plugins.install", review_id=seen["reviewId"], content_hash=seen["contentHash"])
        return self._said(f"installed plugin {done['name']}")

    async def plugin_server(self, name: str, server: str, on: bool = True) -> Text:
        """Start or stop one of a plugin's MCP servers."""
        await self._call("plugins.server", name=name, server=server, enabled=on)
        return self._said(f"{name}'s server {server} is {'on' if on else 'off'}")

    async def remove_plugin(self, name: str) -> Text:
        """Uninstall a plugin and everything it added."""
        await self._call("plugins.remove", name=name)
        return self._said(f"removed plugin {name} and everything it added")
