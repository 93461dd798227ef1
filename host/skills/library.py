"""`SkillLibrary`: the skills installed in one profile, their folders and their pins.

    install(source)            stage a copy, check it, move it to <root>/skills/<name>, pin its hash
    remove(name) / set_enabled(name, on)
    statuses()                 each skill against its pin: ok | changed (not used) | broken
    approve(name, hash)        use a changed copy again, pinning the hash the user was shown
    usable()                   enabled skills whose files are as approved: the prompt's listing
    load(name, resource)       what `load_skill` returns, read fresh and checked against the pin

A plugin's skills live in its own folder (`<root>/plugins/<plugin>/skills/...`) and are pinned
here like the others; they leave with their plugin (`host.plugins`). A folder is moved into
place before its row is written and moved back if the write fails, so a failed install leaves
the previous state whole.
"""

from __future__ import annotations

import os
import shutil
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from host.skills.bundle import SKILL_MD, Bundle, list_resources, read_bundle, read_resource
from host.skills.errors import HASH_MISMATCH, SKILL_EXISTS, SKILL_NOT_FOUND, SKILL_OF_PLUGIN, SkillError
from host.skills.limits import DEFAULT_LIMITS, SkillLimits
from host.skills.pins import Checked, PinCheck
from host.skills.sources import Source, staged
from host.skills.storage import SkillRow, SkillStorage
from host.store.db import Store


@dataclass(frozen=True)
class SkillStatus:
    """An installed skill and how its folder compares with its pin."""

    row: SkillRow
    checked: Checked[Bundle]

    @property
    def usable(self) -> bool:
        """Enabled and exactly as approved."""
        return self.row.enabled and self.checked.status == "ok"


class SkillLibrary:
    """The profile's skills: rows in `db`, files under `root` (created on first install)."""

    def __init__(self, db: Store, root: Path, *, clock: Callable[[], float] = time.time,
                 limits: SkillLimits = DEFAULT_LIMITS):
        self.storage = SkillStorage(db)
        self.root = root
        self.clock = clock
        self.limits = limits
        self.pins: PinCheck[Bundle] = PinCheck(self._read)
        self.listeners: list[Callable[[], None]] = []
        # What a host that stopped mid-install or mid-removal left behind; never read again.
        for leftover in (".staging", ".trash"):
            shutil.rmtree(root / leftover, ignore_errors=True)

    # -- reading -------------------------------------------------------------------------------

    def _read(self, folder: Path) -> tuple[dict[str, str], str, Bundle]:
        bundle = read_bundle(folder, self.limits)
        if bundle.root != folder:
            raise SkillError("not_a_skill", "SKILL.md is not at the top of the installed folder")
        return {f.path: f.sha256 for f in bundle.files}, bundle.content_hash, bundle

    def folder(self, row: SkillRow) -> Path:
        """Where a skill's files are."""
        return self.root / row.folder

    def status(self, row: SkillRow, *, fresh: bool = False) -> SkillStatus:
        """One skill against its pin (`fresh`: hash its files whatever their stat signature)."""
        return SkillStatus(row, self.pins.check(self.folder(row), row.content_hash, row.file_hashes, fresh=fresh))

    def statuses(self) -> list[SkillStatus]:
        """Every installed skill against its pin, by name."""
        return [self.status(row) for row in self.storage.skills()]

    def usable(self) -> list[SkillRow]:
        """The enabled skills whose files are as approved, by name (what the model is told of)."""
        return [s.row for s in self.statuses() if s.usable]

    def get(self, name: str) -> SkillRow:
        """An installed skill's row; SkillError `skill_not_found` naming what is installed."""
        row = self.storage.skill(name)
        if row is None:
            names = ", ".join(r.name for r in self.storage.skills()) or "none"
            raise SkillError(SKILL_NOT_FOUND, f"no skill named {name!r} is installed (installed: {names})")
        return row

    def checked(self, name: str) -> tuple[SkillRow, Bundle]:
        """A skill that may be used now, read fresh: enabled and exactly as approved. Raises
        SkillError `skill_not_found`, `skill_disabled`, `skill_changed` or `skill_broken`."""
        row = self.get(name)
        if not row.enabled:
            raise SkillError("skill_disabled", f"the skill {name!r} is turned off in Tabwarden's settings")
        state = self.status(row, fresh=True).checked
        if state.status == "changed":
            raise SkillError("skill_changed", f"the files of the skill {name!r} changed on disk since the user "
                             f"approved it ({', '.join(state.changed_files[:5])}); it is not used until the user "
                             "approves the new version in Tabwarden's settings")
        if state.status != "ok" or state.current is None:
            raise SkillError("skill_broken", f"the skill {name!r} cannot be read: {state.problem}")
        return row, state.current

    def resource(self, name: str, resource: str) -> tuple[SkillRow, Bundle, str]:
        """One text file of a usable skill's references/ or assets/ (see `read_resource`)."""
        row, bundle = self.checked(name)
        return row, bundle, read_resource(self.folder(row), resource, self.limits)

    def resources(self, row: SkillRow) -> list[str]:
        """The files `load_skill` may return for a skill."""
        return list_resources(self.folder(row))

    # -- changes -------------------------------------------------------------------------------

    def install(self, source: Source, *, replace_existing: bool = False) -> SkillRow:
        """Install one skill from a folder or zip; SkillError `skill_exists` for a name in use
        (unless `replace_existing`, and never over a plugin's skill), or any error of the files."""
        with staged(source, self.root / ".staging", self.limits) as folder:
            bundle = read_bundle(folder, self.limits)
            name = bundle.doc.name
            existing = self.storage.skill(name)
            if existing is not None and existing.plugin is not None:
                raise SkillError(SKILL_OF_PLUGIN, f"a skill named {name!r} came with the plugin {existing.plugin!r}; "
                                 "remove the plugin first, or rename this skill")
            if existing is not None and not replace_existing:
                raise SkillError(SKILL_EXISTS, f"a skill named {name!r} is installed already; replace it "
                                 "(--replace, or Replace in the settings page) or remove it first")
            now = self.clock()
            row = row_of(bundle, folder=f"skills/{name}", source=source.label, now=now,
                         installed_at=existing.installed_at if existing else now,
                         enabled=existing.enabled if existing else True)
            self.move_in(bundle.root, self.root / row.folder, lambda conn: self.storage.put_skill(conn, row))
        self.changed()
        return row

    def move_in(self, staged_root: Path, dest: Path, write: Callable) -> None:
        """Put `staged_root` at `dest` and run `write` in a transaction; on failure, put back what
        was there."""
        os.makedirs(dest.parent, mode=0o700, exist_ok=True)
        aside = None
        if os.path.lexists(dest):
            aside = self.root / ".trash" / uuid.uuid4().hex
            os.makedirs(aside.parent, mode=0o700, exist_ok=True)
            os.replace(dest, aside)
        try:
            os.replace(staged_root, dest)
            with self.storage.db.transaction() as conn:
                write(conn)
        except BaseException:
            shutil.rmtree(dest, ignore_errors=True)
            if aside is not None:
                os.replace(aside, dest)
            raise
        finally:
            self.pins.forget(dest)
        if aside is not None:
            shutil.rmtree(aside, ignore_errors=True)

    def remove(self, name: str) -> None:
        """Remove a skill the user installed: its row, then its folder."""
        row = self.get(name)
        if row.plugin is not None:
            raise SkillError(SKILL_OF_PLUGIN, f"the skill {name!r} came with the plugin {row.plugin!r}: turn it off, "
                             "or remove the plugin")
        with self.storage.db.transaction() as conn:
            self.storage.delete_skill(conn, name)
        self.discard(self.folder(row))
        self.changed()

    def set_enabled(self, name: str, enabled: bool) -> SkillRow:
        """Turn a skill on or off (a plugin's too)."""
        row = replace(self.get(name), enabled=enabled, updated_at=self.clock())
        with self.storage.db.transaction() as conn:
            self.storage.put_skill(conn, row)
        self.changed()
        return row

    def approve(self, name: str, content_hash: str) -> SkillRow:
        """Pin the skill's files as they are now, provided that is `content_hash` (what the user
        was shown); SkillError `hash_mismatch` when the files changed again since."""
        row = self.get(name)
        state = self.status(row, fresh=True).checked
        if state.current is None:
            raise SkillError("skill_broken", f"the skill {name!r} cannot be read: {state.problem}")
        if state.current_hash != content_hash:
            raise SkillError(HASH_MISMATCH, f"the files of {name!r} are now {state.current_hash[:12]}…, not the "
                             f"{content_hash[:12]}… you were shown; look at them again")
        bundle = state.current
        if bundle.doc.name != name:
            raise SkillError("invalid_name", f"SKILL.md now names the skill {bundle.doc.name!r}; install it again "
                             "under that name", f"{SKILL_MD}:name")
        updated = replace(row_of(bundle, folder=row.folder, source=row.source, now=self.clock(),
                                 installed_at=row.installed_at, enabled=row.enabled), plugin=row.plugin)
        with self.storage.db.transaction() as conn:
            self.storage.put_skill(conn, updated)
        self.changed()
        return updated

    def discard(self, folder: Path) -> None:
        """Delete an installed folder (moved aside first, so a half-deleted folder is never read)."""
        if not os.path.lexists(folder):
            return
        aside = self.root / ".trash" / uuid.uuid4().hex
        os.makedirs(aside.parent, mode=0o700, exist_ok=True)
        os.replace(folder, aside)
        self.pins.forget(folder)
        shutil.rmtree(aside, ignore_errors=True)

    def changed(self) -> None:
        for listener in list(self.listeners):
            listener()


def row_of(bundle: Bundle, *, folder: str, source: str, now: float, installed_at: float, enabled: bool = True,
           plugin: str | None = None) -> SkillRow:
    """The row that pins a checked bundle."""
    return SkillRow(name=bundle.doc.name, description=bundle.doc.description, folder=folder,
                    content_hash=bundle.content_hash, file_hashes={f.path: f.sha256 for f in bundle.files},
                    enabled=enabled, plugin=plugin, source=source, files=len(bundle.files),
                    size=sum(f.size for f in bundle.files), has_scripts=bundle.has_scripts,
                    installed_at=installed_at, updated_at=now)
