"""The snapshot diff shown after every write: which lines appeared, which went, which only moved,
and nothing else. Refs the page kept stay valid, so they are not repeated: only the refs that
are new (on added lines, or on lines whose element was replaced) and where the focus went when it
moved. The answer keeps to about a thousand tokens: longer change lists are cut, each saying how
much it left out, and a change across most of the page is answered with the page's new snapshot
instead. Ordered: lines are matched in sequence, so a line that went
once is removed even when an identical one stays, and rows that only changed order (a table
sorted by a click) are a change, shown in their new order. Blind to ref generations:
`[ref=s<doc>_<snap>_<n>]` is compared as `[ref]`, so re-numbering alone is never a change; nor is
the focus moving alone (the `[focused]`/`[active]` after a ref; the answer says where it is
now). Nor is a line the snapshot budget merely left out: each snapshot carries the hashes of
the lines it left out (`line_hash`, the page executor's too), and a line that only went out of,
or came into, the budget is neither removed nor added. An element whose states changed (the same
role and name at the same depth, with a ref on both sides) is one changed line that says what its
states were, not a removal and an addition.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Iterable

import msgspec

_REF = re.compile(r"\[ref=s[0-9a-z]+_\d+_\d+\](?: \[(?:focused|active)\])?", re.ASCII)
_HEADER = re.compile(r"^# Page Snapshot \((s[0-9a-z]+_\d+)\)$")
_REF_OF = re.compile(r"\[ref=(s[0-9a-z]+_\d+_\d+)\]", re.ASCII)
_REF_GENERATION = re.compile(r"\[ref=s[0-9a-z]+_(\d+)_\d+\]", re.ASCII)
_GENERATION_NUMBER = re.compile(r"_(\d+)$")
_DIALOG = re.compile(r"^ *- (?:dialog|alertdialog)\b")
HEADER_LINES = 4
# The moved lines are shown with the lines between them (their new order in context) up to
# this many lines; past it, only the moved lines are.
MOVED_SPAN_LINES = 40
# A few lines that moved far (an item sent to the end) are shown each below the line now
# before it; past this many lines, or runs of them (a sorted table), the head of the new order is
# shown whole instead: runs of cells out of their rows read as nothing.
MAX_MOVED_ALONE = 10
MAX_MOVED_RUNS = 6
# After a line shown in a change list only to place the changes under it.
CONTEXT_MARK = "  (unchanged)"
# What a write's answer keeps to, in characters (about 1k tokens); the change lists share it.
ANSWER_CHARS = 4000
# Removed lines are worth less than added ones (their refs are gone): they get at most this share.
REMOVED_SHARE = 0.3
# A change to more than this share of the page's lines is answered with the new snapshot.
PAGE_WIDE_SHARE = 0.5
KEPT_REFS_NOTE = "Other refs still hold."
ADDED = "Added/changed:"
REMOVED = "Removed:"
RENEWED = "The same lines with new refs (the elements were replaced; their old refs no longer work):"
FOCUS = "The focus is now on:"
READ_FOR_REST = "read_page shows the whole page"
SINCE_EARLIER = ("Told against {since}, an earlier snapshot than the latest, which the page is closer to now: the "
                 "changes below are those since {since} (what the snapshots after it showed and is not listed here is "
                 "gone), and its refs still on the page work as they are.")


class SnapshotDiff(msgspec.Struct, frozen=True):
    """The diff text for the model and whether anything structural changed."""

    text: str
    changed: bool
    added: int = 0
    removed: int = 0
    moved: int = 0
    renewed: int = 0  # lines that stayed, with a ref given after the snapshot compared with
    restated: tuple[str, ...] = ()  # the refs of the elements whose states changed
    focus_restated: bool = False  # the element that holds the focus is one of them
    dialogs_opened: tuple[str, ...] = ()  # the lines of the dialogs that appeared
    dialogs_closed: int = 0  # how many dialogs went


def _body(snapshot: str) -> list[str]:
    lines = snapshot.split("\n")[HEADER_LINES:]
    # The truncation marker is a note about the budget, not page content.
    return [line for line in lines if line.strip() and not line.startswith("[truncated:")]


def _normal(line: str) -> str:
    return _REF.sub("[ref]", line)


def line_hash(line: str) -> str:
    """What a snapshot line is known by whatever its ref's generation and focus marks: FNV-1a
    (32 bits) over the UTF-8 bytes of its normal form, in base 36 (as the page executor does)."""
    value = 0x811C9DC5
    for byte in _normal(line).encode("utf-8"):
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        value, rest = divmod(value, 36)
        out = digits[rest] + out
        if not value:
            return out


def _still_there(indices: list[int], lines: list[str], hidden: Iterable[str]) -> list[int]:
    """`indices` without the lines the other snapshot had only left out for its budget."""
    left_out = Counter(hidden)
    if not left_out:
        return indices
    kept = []
    for index in indices:
        key = line_hash(lines[index])
        if left_out[key] > 0:
            left_out[key] -= 1
        else:
            kept.append(index)
    return kept


def generation_of(snapshot: str) -> str:
    """The snapshot id from a snapshot's header ("" when it has none)."""
    first = snapshot.split("\n", 1)[0]
    match = _HEADER.match(first)
    return match.group(1) if match else ""


class _Edits(msgspec.Struct, frozen=True):
    added: list[int]  # indices in the new lines
    removed: list[int]  # indices in the old lines
    moved: list[int]  # indices in the new lines
    span: tuple[int, int] | None  # new lines from where the moved lines were to where they are


def _edits(old: list[str], new: list[str], previous_hidden: Iterable[str] = (), hidden: Iterable[str] = ()) -> _Edits:
    """Match the lines in sequence: a line dropped in one place and inserted in another moved.
    A line inserted that the old snapshot's budget had left out was there all along, and one
    dropped that the new snapshot's budget left out is there still: neither counts, as a
    change or as half of a move."""
    from difflib import SequenceMatcher  # only a write's diff needs it

    inserted: list[int] = []
    deleted: list[int] = []
    kept: dict[int, int] = {}  # old index -> new index of the lines that stayed in sequence
    # The unchanged head and tail first: the matcher takes the longest common block, which in
    # repetitive content (rows alike) may pair lines far apart and call a single insertion a move.
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    kept.update((k, k) for k in range(head))
    kept.update((len(old) - 1 - k, len(new) - 1 - k) for k in range(tail))
    middle = SequenceMatcher(None, old[head:len(old) - tail], new[head:len(new) - tail], autojunk=False)
    for tag, i1, i2, j1, j2 in middle.get_opcodes():
        i1, i2, j1, j2 = i1 + head, i2 + head, j1 + head, j2 + head
        if tag == "equal":
            kept.update(zip(range(i1, i2), range(j1, j2)))
        if tag in ("delete", "replace"):
            deleted.extend(range(i1, i2))
        if tag in ("insert", "replace"):
            inserted.extend(range(j1, j2))
    inserted = _still_there(inserted, new, previous_hidden)
    gone: dict[str, list[int]] = {}
    for i in _still_there(deleted, old, hidden):
        gone.setdefault(old[i], []).append(i)
    added: list[int] = []
    moved: list[int] = []
    span: tuple[int, int] | None = None
    for j in inserted:
        was = gone.get(new[j])
        if not was:
            added.append(j)
            continue
        i = was.pop(0)
        moved.append(j)
        # Where it stood before, in the new lines: after the kept line that preceded it.
        before = max((kept[k] for k in range(i - 1, -1, -1) if k in kept), default=-1)
        after = min((kept[k] for k in range(i + 1, len(old)) if k in kept), default=len(new))
        low, high = min(j, before + 1), max(j, after - 1)
        span = (low, high) if span is None else (min(span[0], low), max(span[1], high))
    removed = sorted(i for left in gone.values() for i in left)
    return _Edits(added, removed, moved, span)


# What a ref line's element is known by: its indentation, role and name (before its states).
_IDENTITY = re.compile(r'^( *- [a-z]+(?: "(?:[^"\\]|\\.)*")?)(.*)$')
_STATE = re.compile(r"\[(?!ref[=\]])[^\]]*\]")


def _paired(old: list[str], new: list[str], removed: list[int], added: list[int]) -> dict[int, int]:
    """Added lines that are a removed line's element in a new state, matched in order: new
    index -> old index. The same role and name at the same depth, both with refs; or, for
    structure without refs (a sorted column's header), the only such line on each side."""
    def keyed(lines: list[str], picked: list[int]) -> dict[tuple[str, bool], list[int]]:
        out: dict[tuple[str, bool], list[int]] = {}
        for i in picked:
            found = _IDENTITY.match(lines[i])
            if found and (not found.group(2) or found.group(2).startswith(" [")):  # an element's line, not text
                out.setdefault((found.group(1), "[ref]" in found.group(2)), []).append(i)
        return out

    olds, news = keyed(old, removed), keyed(new, added)
    pairs: dict[int, int] = {}
    for key, js in news.items():
        waiting = olds.get(key, [])
        if not key[1] and (len(js) != 1 or len(waiting) != 1):
            continue  # structure is paired only when it is unambiguous
        for j, i in zip(js, waiting):
            pairs[j] = i
    return pairs


def _was(old_line: str, new_line: str) -> str:
    """What an element's changed line says of its states before: those it lost, or the ones it
    did not have."""
    before, after = (_IDENTITY.match(line) for line in (old_line, new_line))
    old_states = _STATE.findall(before.group(2)) if before else []
    new_states = _STATE.findall(_normal(after.group(2))) if after else []
    lost = [state for state in old_states if state not in new_states]
    if lost:
        return f"  (was: {' '.join(lost)})"
    gained = [state for state in new_states if state not in old_states]
    return f"  (was: without {' '.join(gained)})" if gained else "  (was: the same states)"


def _depth(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _in_context(lines: list[str], picked: Iterable[int], mark: str = "") -> list[str]:
    """The `picked` lines, each with the lines it is nested under, in the snapshot's order; a
    line shown only as such context ends with `mark`. Without them, a changed line read as
    nested under whatever line came before it (a menu's items under the button before the
    menu, a header cell under an unrelated button)."""
    chosen = set(picked)
    keep: set[int] = set()
    chain: list[tuple[int, int]] = []  # (indentation, index) of the lines the current one is nested in
    for index, line in enumerate(lines):
        depth = _depth(line)
        while chain and chain[-1][0] >= depth:
            chain.pop()
        if index in chosen:
            keep.add(index)
            keep.update(i for _, i in chain)
        chain.append((depth, index))
    return [lines[i] if i in chosen else lines[i] + mark for i in sorted(keep)]


def _head_of_new_order(after: list[str], first: int, count: int) -> str:
    """Many places moved (a table sorted by a click): the new order from its start, in whole
    blocks (a row with its cells), from the container of the first moved line (its rows that
    did not move are first in the new order too)."""
    start = first
    while start > 0 and _depth(after[start - 1]) >= _depth(after[first]):
        start -= 1  # the earlier lines of the same block (a row's first cells)
    if start > 0:
        start -= 1  # the line that holds them (a row)
    row = _depth(after[start])
    while start > 0 and _depth(after[start - 1]) >= row:
        start -= 1  # the rows before it, unmoved
    if start > 0:
        start -= 1  # and the table that holds them all
    end = min(len(after), start + MOVED_SPAN_LINES)
    while end < len(after) and end > start + 2 and _depth(after[end]) > row:
        end -= 1  # not in the middle of a row
    more = " (read the page for the rest)" if end < len(after) else ""
    return (f"Order changed ({count} lines moved); the new order from its start{more}:\n" + "\n".join(after[start:end]))


def _moved_section(after: list[str], edits: _Edits) -> str:
    assert edits.span is not None
    first, last = edits.span
    if last - first < MOVED_SPAN_LINES:
        return "Order changed; these lines now read:\n" + "\n".join(after[first:last + 1])
    # Too far apart to show whole: each run of moved lines after the line now before it.
    runs: list[list[int]] = []
    for j in edits.moved:
        if runs and runs[-1][-1] == j - 1:
            runs[-1].append(j)
        else:
            runs.append([j])
    count = len(edits.moved)
    if count > MAX_MOVED_ALONE or len(runs) > MAX_MOVED_RUNS:
        return _head_of_new_order(after, first, count)
    shown: list[str] = []
    room = MOVED_SPAN_LINES + 1  # lines in all, the runs' leading lines included
    for run in runs:
        if room <= 1:
            break
        lines = (([after[run[0] - 1]] if run[0] else ["(at the top)"]) + [after[j] for j in run])[:room]
        room -= len(lines)
        shown.append("\n".join(lines))
    return (f"Order changed ({count} line{'s' if count != 1 else ''} moved; read the page for the whole order). "
            "Each run of moved lines below the line now before it:\n" + "\n…\n".join(shown))


def _within(lines: list[str], room: int) -> tuple[list[str], int]:
    """The first of `lines` that fit in `room` characters (one at least), and how many of the
    lines left out are changes (not context)."""
    kept: list[str] = []
    used = 0
    for index, line in enumerate(lines):
        used += len(line) + 1
        if kept and used > room:
            return kept, sum(1 for rest in lines[index:] if not rest.endswith(CONTEXT_MARK))
        kept.append(line)
    return kept, 0


def _section(title: str, lines: list[str], room: int) -> str:
    shown, left = _within(lines, room)
    more = f"\n… and {left} more (this answer keeps to about {ANSWER_CHARS // 4} tokens; {READ_FOR_REST})" if left else ""
    return f"{title}\n" + "\n".join(shown) + more


_FOCUS = re.compile(r"\[ref=(s[0-9a-z]+_\d+_\d+)\] \[(?:focused|active)\]", re.ASCII)


def _focus_moved(before: list[str], after: list[str], added: set[int], acted: Iterable[str]) -> list[int]:
    """The lines that hold the focus (or the active descendant) now and did not before, when
    they are not among the added lines already nor the elements the write acted on (the answer
    names those)."""
    held = {match.group(1) for line in before if (match := _FOCUS.search(line))} | set(acted)
    return [j for j, line in enumerate(after) if j not in added and (match := _FOCUS.search(line))
            and match.group(1) not in held]


def _number_of(previous: str, generation: str) -> int:
    """The number of the snapshot `previous` is (one with no header: the one before
    `generation`); the refs given after it are new to a model that looks from there."""
    found = _GENERATION_NUMBER.search(generation_of(previous))
    if found:
        return int(found.group(1))
    found = _GENERATION_NUMBER.search(generation)
    return int(found.group(1)) - 1 if found else 0


def _renewed(after: list[str], added: set[int], since: int) -> list[int]:
    """Lines not added whose ref a snapshot after the one compared with (number `since`) gave:
    the same line, another element (a list re-rendered), so the ref given before no longer
    works."""
    out = []
    for j, line in enumerate(after):
        found = _REF_GENERATION.search(line) if j not in added else None
        if found and int(found.group(1)) > since:
            out.append(j)
    return out


def diff_snapshots(previous: str | None, current: str, *, previous_hidden: Iterable[str] = (),
                   hidden: Iterable[str] = (), acted: Iterable[str] = (), since: str = "") -> SnapshotDiff:
    """Compare two snapshot texts of the same document. With no previous snapshot the whole
    current one is the answer. `previous_hidden` / `hidden`: the hashes of the lines each one's
    budget left out. `acted`: the refs the write acted on. `since`: the id of `previous` when it
    is an earlier snapshot than the latest one (the answer says so)."""
    if not previous:
        return SnapshotDiff(text=current, changed=True)
    before = _body(previous)
    after = _body(current)
    old = [_normal(line) for line in before]
    new = [_normal(line) for line in after]
    edits = _edits(old, new, previous_hidden, hidden)
    added, removed, moved = edits.added, edits.removed, edits.moved
    # An element whose states changed is one changed line, saying what it was, not a removal too.
    pairs = _paired(old, new, removed, added)
    restated_old = set(pairs.values())
    removed = [i for i in removed if i not in restated_old]
    generation = generation_of(current)
    header = f"# Page Changes ({generation})"
    if since:
        header += f" since {since}\n{SINCE_EARLIER.format(since=since)}"
    changed = bool(added or removed or moved)
    restated = tuple(found.group(1) for j in pairs if (found := _REF_OF.search(after[j])))
    focus_restated = any("] [focused]" in after[j] for j in pairs)
    opened = tuple(after[j].strip() for j in added if j not in pairs and _DIALOG.match(after[j]))
    closed = sum(1 for i in removed if _DIALOG.match(old[i]))
    renewed = _renewed(after, set(added), _number_of(previous, generation))
    facts = dict(changed=changed, added=len(added), removed=len(removed), moved=len(moved), renewed=len(renewed),
                 restated=restated, focus_restated=focus_restated, dialogs_opened=opened, dialogs_closed=closed)
    sections = _change_sections(before, after, old, edits, pairs, removed, renewed, tuple(acted))
    text = "\n\n".join([header, *sections, f"Other refs of {since} still hold." if since else KEPT_REFS_NOTE])
    if len(text) > ANSWER_CHARS and len(added) + len(removed) > PAGE_WIDE_SHARE * max(len(after), len(before), 1):
        text = (f"{header}\nThe page changed throughout ({len(added)} lines added, {len(removed)} removed); "
                f"its snapshot now, where a ref from before that is not in it does not work (unless its element "
                f"comes back, as the page behind a closed popover does):\n\n{current}")
    return SnapshotDiff(text=text, **facts)


def _change_sections(before: list[str], after: list[str], old: list[str], edits: _Edits, pairs: dict[int, int],
                     removed: list[int], renewed: list[int], acted: tuple[str, ...]) -> list[str]:
    """The sections of a diff's answer within its budget: added or changed lines, removed ones,
    lines that moved, refs renewed on lines that did not change, where the focus went."""
    added = edits.added
    sections: list[str] = []
    room = ANSWER_CHARS
    if added:
        shown = list(after)
        for j, i in pairs.items():
            shown[j] = after[j] + _was(old[i], after[j])
        sections.append(_section(ADDED, _in_context(shown, added, CONTEXT_MARK), room))
        room -= len(sections[-1])
    if removed:
        share = max(int(ANSWER_CHARS * REMOVED_SHARE), 200) if added else room
        sections.append(_section(REMOVED, _in_context(old, removed, CONTEXT_MARK), min(max(room, 200), share)))
        room -= len(sections[-1])
    if edits.moved:
        sections.append(_moved_section(after, edits))
        room -= len(sections[-1])
    if not sections:
        sections.append("No structural change detected.")
    taken = set(added)
    if renewed:
        sections.append(_section(RENEWED, _in_context(after, renewed, CONTEXT_MARK), max(room, 400)))
        room -= len(sections[-1])
        taken.update(renewed)
    focus = _focus_moved(before, after, taken, acted)
    if focus:
        sections.append(f"{FOCUS}\n" + "\n".join(after[j].strip() for j in focus[:3]))
    return sections
