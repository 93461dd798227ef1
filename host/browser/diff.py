"""The snapshot diff shown after every write: which lines appeared, which went, and every ref the
page offers now. Set-based, and blind to ref generations: `[ref=s<doc>_<snap>_<n>]` is compared
as `[ref]`, so re-numbering alone is never a change; nor is the focus moving alone (the
`[focused]`/`[active]` after a ref; the refs listed show where it is now).
"""

from __future__ import annotations

import re

import msgspec

_REF = re.compile(r"\[ref=s[0-9a-z]+_\d+_\d+\](?: \[(?:focused|active)\])?")
_HEADER = re.compile(r"^# Page Snapshot \((s[0-9a-z]+_\d+)\)$")
HEADER_LINES = 4


class SnapshotDiff(msgspec.Struct, frozen=True):
    """The diff text for the model and whether anything structural changed."""

    text: str
    changed: bool
    added: int = 0
    removed: int = 0


def _body(snapshot: str) -> list[str]:
    lines = snapshot.split("\n")[HEADER_LINES:]
    # The truncation marker is a note about the budget, not page content.
    return [line for line in lines if line.strip() and not line.startswith("[truncated:")]


def _normal(line: str) -> str:
    return _REF.sub("[ref]", line)


def generation_of(snapshot: str) -> str:
    """The snapshot id from a snapshot's header ("" when it has none)."""
    first = snapshot.split("\n", 1)[0]
    match = _HEADER.match(first)
    return match.group(1) if match else ""


def diff_snapshots(previous: str | None, current: str) -> SnapshotDiff:
    """Compare two snapshot texts of the same document. With no previous snapshot the whole
    current one is the answer."""
    if not previous:
        return SnapshotDiff(text=current, changed=True)
    before = _body(previous)
    after = _body(current)
    before_set = {_normal(line) for line in before}
    after_set = {_normal(line) for line in after}
    added = [line for line in after if _normal(line) not in before_set]
    removed: list[str] = []
    seen: set[str] = set()
    for line in before:
        normal = _normal(line)
        if normal not in after_set and normal not in seen:
            seen.add(normal)
            removed.append(normal)
    refs = [line for line in after if "[ref=" in line]
    sections = [f"# Page Changes ({generation_of(current)})"]
    if added:
        sections.append("Added/changed:\n" + "\n".join(added))
    if removed:
        sections.append("Removed:\n" + "\n".join(removed))
    if not added and not removed:
        sections.append("No structural change detected.")
    if refs:
        sections.append("Current interactive refs:\n" + "\n".join(refs))
    return SnapshotDiff(text="\n\n".join(sections), changed=bool(added or removed), added=len(added), removed=len(removed))
