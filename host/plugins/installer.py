"""`Plugins`: reviewing, installing and removing plugins whole.

    review(source)             stage a copy and say everything it would add (nothing is added)
    install(review_id, hash)   add exactly the reviewed copy: files to <root>/plugins/<name>, its
                               skills pinned (turned on), its servers (off until turned on), its
                               rules and list entries put in force as `injected:plugin:<name>`
    remove(name)               take away every skill, server, rule and list entry it added
    set_server_enabled(...)    start or stop one of its MCP servers
    apply()                    at start-up: put every installed plugin's rules in force

A plugin's rules and lists come from the manifest stored at install, never from its files
afterwards; its skills are pinned like any skill. Nothing of the user's (their skills, their
mcp.json, their rules and lists) is written or removed here.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from host.plugins.errors import PLUGIN_NOT_FOUND, REVIEW_NOT_FOUND, SERVER_EXISTS, PluginError
from host.plugins.manifest import Manifest, read_manifest
from host.skills.bundle import Bundle, check_folder, read_bundle
from host.skills.errors import HASH_MISMATCH, SKILL_EXISTS
from host.skills.library import SkillLibrary, row_of
from host.skills.limits import PLUGIN_LIMITS
from host.skills.sources import Source, staged
from host.skills.storage import PluginRow

log = logging.getLogger("tabwarden.plugins")
REVIEW_TTL_S = 30 * 60


@dataclass(frozen=True)
class Review:
    """A staged plugin and everything installing it would add."""

    id: str
    folder: Path
    content_hash: str
    manifest: Manifest
    skills: tuple[Bundle, ...]
    replaces: str | None  # the installed version it would replace
    source: str
    expires_at: float


class Plugins:
    """The profile's plugins. `gatekeeper` takes their rules (None: no host runs, and it takes
    them when it starts); `user_servers()` names the MCP
    servers the user configured (a plugin may not take one of their names); `on_servers` is told
    when the servers plugins offer changed."""

    def __init__(self, library: SkillLibrary, gatekeeper: Any, *, user_servers: Callable[[], set[str]] = set,
                 clock: Callable[[], float] = time.time):
        self.library = library
        self.gatekeeper = gatekeeper
        self.user_servers = user_servers
        self.clock = clock
        self.on_servers: Callable[[], None] | None = None
        self._reviews: dict[str, Review] = {}
        self._lock = threading.Lock()

    @property
    def storage(self):
        """The rows (shared with the skill library)."""
        return self.library.storage

    # -- review and install --------------------------------------------------------------------

    def review(self, source: Source) -> Review:
        """Stage the plugin and check everything in it; raises PluginError / SkillError."""
        self._expire()
        review_id = uuid.uuid4().hex[:16]
        folder = self.library.root / ".staging" / f"review-{review_id}"
        with staged(source, self.library.root / ".staging", PLUGIN_LIMITS) as copy:
            root = _plugin_root(copy)
            _files, content_hash = check_folder(root, PLUGIN_LIMITS)
            manifest = read_manifest(root)
            skills = tuple(read_bundle(root / relative, self.library.limits) for relative in manifest.skills)
            for bundle, relative in zip(skills, manifest.skills):
                if bundle.root != root / relative:
                    raise PluginError("not_a_skill", "SKILL.md must be at the top of the skill's folder", relative)
            installed = self.storage.plugin(manifest.name)
            self._check_clashes(manifest, skills)
            os.replace(root, folder)
        skills = tuple(replace(b, root=folder / rel) for b, rel in zip(skills, manifest.skills))
        review = Review(review_id, folder, content_hash, manifest, skills,
                        installed.manifest.get("version") or "installed" if installed else None,
                        source.label, self.clock() + REVIEW_TTL_S)
        with self._lock:
            self._reviews[review_id] = review
        return review

    def _check_clashes(self, manifest: Manifest, skills: tuple[Bundle, ...]) -> None:
        names = [b.doc.name for b in skills]
        if len(set(names)) != len(names):
            raise PluginError(SKILL_EXISTS, "two of the plugin's skills have the same name")
        for name in names:
            existing = self.storage.skill(name)
            if existing is not None and existing.plugin != manifest.name:
                owner = f"the plugin {existing.plugin!r}" if existing.plugin else "you"
                raise PluginError(SKILL_EXISTS, f"a skill named {name!r} is installed already (by {owner})", name)
        mine = set(manifest.servers)
        for server_id in sorted(mine & self.user_servers()):
            raise PluginError(SERVER_EXISTS, f"you already configured an MCP server named {server_id!r} in mcp.json",
                              f"mcpServers.{server_id}")
        for other in self.storage.plugins():
            if other.name != manifest.name:
                for server_id in sorted(mine & set(other.manifest.get("servers", {}))):
                    raise PluginError(SERVER_EXISTS, f"the plugin {other.name!r} already brings an MCP server named "
                                      f"{server_id!r}", f"mcpServers.{server_id}")

    def install(self, review_id: str, content_hash: str) -> PluginRow:
        """Install the reviewed copy; PluginError `review_not_found`, `hash_mismatch` (not what
        was reviewed), or a clash that appeared since the review."""
        self._expire()
        with self._lock:
            review = self._reviews.pop(review_id, None)
        if review is None:
            raise PluginError(REVIEW_NOT_FOUND, "that review is not staged any more (it expired after "
                              f"{REVIEW_TTL_S // 60} minutes, or was installed); review the plugin again")
        try:
            files, now_hash = check_folder(review.folder, PLUGIN_LIMITS)
            if content_hash != review.content_hash or now_hash != review.content_hash:
                raise PluginError(HASH_MISMATCH, "the plugin is not the copy that was reviewed; review it again")
            manifest = review.manifest
            self._check_clashes(manifest, review.skills)
            row = self._rows(review, {f.path: f.sha256 for f in files})
            dest = self.library.root / "plugins" / manifest.name
            self.library.move_in(review.folder, dest, lambda conn: self._write(conn, row, review))
        finally:
            shutil.rmtree(review.folder, ignore_errors=True)
        try:
            self._put_in_force(row)
        except BaseException:
            self.remove(row.name)  # installed without its rules would be looser than reviewed
            raise
        self.library.changed()
        return row

    def _rows(self, review: Review, file_hashes: dict[str, str]) -> PluginRow:
        installed = self.storage.plugin(review.manifest.name)
        now = self.clock()
        kept = installed.server_enabled if installed else {}
        return PluginRow(name=review.manifest.name, folder=f"plugins/{review.manifest.name}",
                         content_hash=review.content_hash, file_hashes=file_hashes, manifest=review.manifest.wire(),
                         server_enabled={s: bool(kept.get(s, False)) for s in review.manifest.servers},
                         source=review.source, installed_at=installed.installed_at if installed else now,
                         updated_at=now)

    def _write(self, conn: Any, row: PluginRow, review: Review) -> None:
        before = {s.name: s for s in self.storage.skills() if s.plugin == row.name}
        self.storage.delete_plugin(conn, row.name)
        self.storage.put_plugin(conn, row)
        for bundle, relative in zip(review.skills, review.manifest.skills):
            old = before.get(bundle.doc.name)
            self.storage.put_skill(conn, row_of(bundle, folder=f"{row.folder}/{relative}", source=row.source,
                                                now=row.updated_at, installed_at=old.installed_at if old else row.updated_at,
                                                enabled=old.enabled if old else True, plugin=row.name))

    # -- changes -------------------------------------------------------------------------------

    def get(self, name: str) -> PluginRow:
        """An installed plugin; PluginError `plugin_not_found` naming what is installed."""
        row = self.storage.plugin(name)
        if row is None:
            names = ", ".join(p.name for p in self.storage.plugins()) or "none"
            raise PluginError(PLUGIN_NOT_FOUND, f"no plugin named {name!r} is installed (installed: {names})")
        return row

    def remove(self, name: str) -> None:
        """Uninstall: its rows (and its skills'), then its rules and lists, its servers, its files."""
        row = self.get(name)
        with self.storage.db.transaction() as conn:
            self.storage.delete_plugin(conn, name)
        if self.gatekeeper is not None:
            self.gatekeeper.inject_rules(_injected(name), [])
        self.library.discard(self.library.root / row.folder)
        self._servers_changed()
        self.library.changed()

    def set_server_enabled(self, name: str, server: str, enabled: bool) -> PluginRow:
        """Start or stop one of the plugin's MCP servers."""
        row = self.get(name)
        if server not in row.manifest.get("servers", {}):
            raise PluginError(PLUGIN_NOT_FOUND, f"the plugin {name!r} brings no MCP server named {server!r}")
        row = replace(row, server_enabled={**row.server_enabled, server: enabled}, updated_at=self.clock())
        with self.storage.db.transaction() as conn:
            self.storage.put_plugin(conn, row)
        self._servers_changed()
        self.library.changed()
        return row

    def approve(self, name: str, content_hash: str) -> PluginRow:
        """Use a plugin whose files changed on disk again: its files must now hash to
        `content_hash` (what the user was shown) and add exactly what the stored manifest says
        (a changed manifest is an update: review it again). Its skills are pinned anew."""
        row = self.get(name)
        folder = self.library.root / row.folder
        files, now_hash = check_folder(folder, PLUGIN_LIMITS)
        if now_hash != content_hash:
            raise PluginError(HASH_MISMATCH, f"the plugin's files are now {now_hash[:12]}…, not the "
                              f"{content_hash[:12]}… you were shown; look at them again")
        manifest = read_manifest(folder)
        if manifest.wire() != row.manifest:
            raise PluginError(HASH_MISMATCH, "the plugin's manifest changed what it adds; install it again from its "
                              "source to review the change")
        updated = replace(row, content_hash=now_hash, file_hashes={f.path: f.sha256 for f in files},
                          updated_at=self.clock())
        skills = {s.name: s for s in self.storage.skills() if s.plugin == name}
        with self.storage.db.transaction() as conn:
            self.storage.put_plugin(conn, updated)
            for relative in manifest.skills:
                bundle = read_bundle(folder / relative, self.library.limits)
                old = skills.get(bundle.doc.name)
                if old is None:
                    raise PluginError(HASH_MISMATCH, f"the skill in {relative!r} is now named {bundle.doc.name!r}; "
                                      "install the plugin again to review the change")
                self.storage.put_skill(conn, replace(old, description=bundle.doc.description,
                                                     content_hash=bundle.content_hash,
                                                     file_hashes={f.path: f.sha256 for f in bundle.files},
                                                     files=len(bundle.files), size=sum(f.size for f in bundle.files),
                                                     has_scripts=bundle.has_scripts, updated_at=self.clock()))
        self.library.changed()
        return updated

    def apply(self) -> list[str]:
        """Put every installed plugin's rules and lists in force (at start-up); returns the
        names whose rules could not be applied (they are logged, and the rest still apply)."""
        failed = []
        for row in self.storage.plugins():
            try:
                self._put_in_force(row)
            except Exception:
                log.exception("putting the plugin %s in force failed", row.name)
                failed.append(row.name)
        return failed

    def _put_in_force(self, row: PluginRow) -> None:
        manifest = row.manifest
        if self.gatekeeper is None:
            return  # no host runs: it puts the rules in force when it starts
        self.gatekeeper.inject_rules(_injected(row.name), manifest.get("rules", []),
                                     blocked=manifest.get("blocked", []), guarded=manifest.get("guarded", []))
        self._servers_changed()

    def servers(self) -> dict[str, Any]:
        """The MCP servers plugins bring, as mcp.json entries (`enabled` as the user set it), by
        id; a user's server of the same id wins over them."""
        from host.mcp.config import parse_mcp_config

        entries: dict[str, dict[str, Any]] = {}
        for row in self.storage.plugins():
            for server_id, body in row.manifest.get("servers", {}).items():
                entries[server_id] = {**body, "enabled": bool(row.server_enabled.get(server_id, False))}
        return dict(parse_mcp_config({"servers": entries}, "plugins").servers) if entries else {}

    def _servers_changed(self) -> None:
        if self.on_servers is not None:
            self.on_servers()

    def _expire(self) -> None:
        now = self.clock()
        with self._lock:
            gone = [r for r in self._reviews.values() if r.expires_at <= now]
            for review in gone:
                del self._reviews[review.id]
        for review in gone:
            shutil.rmtree(review.folder, ignore_errors=True)


def _injected(name: str) -> str:
    return f"plugin:{name}"


def _plugin_root(folder: Path) -> Path:
    """The plugin's top folder: `folder` itself, or its only sub-folder (a zip of the folder)."""
    from host.plugins.manifest import MANIFEST_PLACES

    if any(os.path.lexists(folder / place) for place in MANIFEST_PLACES):
        return folder
    entries = [e for e in os.scandir(folder) if e.name not in ("__MACOSX", ".DS_Store")]
    if len(entries) == 1 and entries[0].is_dir(follow_symlinks=False):
        return Path(entries[0].path)
    return folder  # read_manifest names what is missing


def attach_plugins(skills: Any, engine: Any, mcp: Any = None) -> Plugins:
    """The plugins of the engine's store, beside its skills (`skills`: the attached SkillTools):
    their rules and lists put in force, and `mcp` (the MCP manager) told of the servers they
    bring. Call before `engine.start()`."""
    plugins = Plugins(skills.library, engine.gatekeeper, user_servers=lambda: _user_servers(mcp), clock=engine.clock)
    skills.plugins = plugins
    failed = plugins.apply()
    if failed:
        log.error("the rules of these plugins could not be put in force: %s", ", ".join(failed))
    if mcp is not None:
        mcp.more_servers = plugins.servers
    return plugins


def _user_servers(mcp: Any) -> set[str]:
    """The server ids of the user's mcp.json (none when it cannot be read: the user's own
    server still wins a clash once the file is fixed)."""
    from host.mcp.config import load_mcp_config

    try:
        return set(load_mcp_config(mcp.config_file() if mcp is not None else None).servers)
    except Exception:
        return set()
