"""Snapshots arriving from the page: record their refs in the host-side map (and their text as
the baseline of the next diff), and take a fresh one after a navigation."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import msgspec

from host.browser.bridge import Bridge
from host.tools.failure import ToolFailure
from host.browser.refmap import RefMap
from host.browser.wire import ExecuteResult, PageSnapshot

if TYPE_CHECKING:
    from host.browser.diff import SnapshotDiff

POST_WRITE_TOKENS = 1500


def record(refs: RefMap, tab_id: int, snapshot: PageSnapshot | None, *, baseline: bool = True) -> dict[str, Any] | None:
    """Store a snapshot from an ExecuteResult; returns a small summary for result details.
    `baseline`: its text is what the next write's diff compares with (not a `full` read, whose
    text runs are whole where a write's snapshot cuts them: the next write then shows its
    whole snapshot)."""
    if snapshot is None:
        return None
    refs.record(tab_id, snapshot.doc_token, snapshot.snapshot_id, snapshot.refs, snapshot.text if baseline else "",
                snapshot.hidden if baseline else ())
    return {"snapshot": snapshot.id, "refCount": snapshot.ref_count, "truncatedNodes": snapshot.truncated_nodes,
            "truncatedRefs": snapshot.truncated_refs}


async def fresh_snapshot(bridge: Bridge, refs: RefMap, tab_id: int, max_tokens: int = POST_WRITE_TOKENS) -> str:
    """Read the tab's page now (after a navigation); returns the snapshot text, or a note saying
    why there is none (no site access, empty page...)."""
    try:
        result = await bridge.content(tab_id, "read_page", {"maxTokens": max_tokens}, write=False)
    except ToolFailure as exc:
        return _no_snapshot(exc.code, exc.message)
    record(refs, tab_id, result.snapshot)
    return result.result_text


def _no_snapshot(code: object, message: object) -> str:
    return f"(no snapshot: {code}: {message})"


def _load_options(timeout_s: float, snapshot: bool) -> dict[str, Any]:
    """The options of a wait for a load; with `snapshot`, the loaded page is read in the same call."""
    options: dict[str, Any] = {"timeoutMs": int(timeout_s * 1000)}
    if snapshot:
        options["snapshot"] = {"maxTokens": POST_WRITE_TOKENS}
    return options


async def loaded_snapshot(bridge: Bridge, refs: RefMap, tab_id: int, loaded: dict[str, Any]) -> str:
    """The snapshot the extension took as the load ended (`snapshot=True` on the wait), recorded
    as `fresh_snapshot` records its own; read now when the load brought none (or its read found
    no executor answering, which a second read repairs)."""
    failure = loaded.get("snapshotFailure")
    if isinstance(failure, dict) and failure.get("code") != "no_reply":
        return _no_snapshot(failure.get("code"), failure.get("message"))
    try:
        result = msgspec.convert(loaded["snapshot"], ExecuteResult)
    except (KeyError, msgspec.ValidationError):
        return await fresh_snapshot(bridge, refs, tab_id)
    record(refs, tab_id, result.snapshot)
    return result.result_text


class Baseline(NamedTuple):
    """What a diff compares a new snapshot with: the tab's last one, as the ref map keeps it, and
    a few before it (snapshot, text, hidden), latest first."""

    doc_token: str
    text: str
    hidden: tuple[str, ...]
    earlier: tuple[tuple[str, str, tuple[str, ...]], ...] = ()


def baseline(refs: RefMap, tab_id: int) -> Baseline:
    """The tab's last snapshot, to take before a new one arrives."""
    token, text = refs.last_text(tab_id)
    return Baseline(token, text, refs.last_hidden(tab_id), refs.earlier_texts(tab_id))


# A diff that adds at least this many lines (the page behind a closed popover that came back)
# is compared with the ones against the earlier snapshots; a menu that closed, a line or two
# that changed, are told against the latest as they are.
MANY_LINES_BACK = 5


def changes(before: Baseline, snapshot: PageSnapshot, acted: tuple[str, ...] = ()) -> "SnapshotDiff":
    """What `snapshot` shows changed since `before`: the whole snapshot when that was of
    another document (or there was none). `acted`: the refs the write acted on.

    A page that goes back to how it was two or three snapshots ago (a popover or a modal closed,
    whose page behind it had left the tree while it was open) is told against that snapshot when
    fewer than half as many lines changed since (or came back with other refs than it gave) as
    against the latest, or the earlier one taken already: its elements come back with the refs it
    gave them where they are the same elements. Only a diff that brought back five lines or more
    is looked at again. What happened in this step (a dialog that closed, the target's own change) is
    still told from the diff against the last snapshot."""
    from host.browser.diff import diff_snapshots  # only a write's answer needs it

    same_document = bool(before.doc_token) and before.doc_token == snapshot.doc_token
    latest = diff_snapshots(before.text if same_document else None, snapshot.text, previous_hidden=before.hidden,
                            hidden=snapshot.hidden, acted=acted)
    if not same_document or not before.text or latest.added < MANY_LINES_BACK:
        return latest
    best = latest
    for label, text, hidden in before.earlier:
        other = diff_snapshots(text, snapshot.text, previous_hidden=hidden, hidden=snapshot.hidden, acted=acted,
                               since=label)
        if (other.added + other.removed + other.renewed) * 2 < best.added + best.removed + best.renewed:
            best = other
    return latest if best is latest else msgspec.structs.replace(latest, text=best.text)


async def changes_since_last(bridge: Bridge, refs: RefMap, tab_id: int,
                             max_tokens: int = POST_WRITE_TOKENS) -> "SnapshotDiff | None":
    """Read the tab's page again and say what changed since its last snapshot, as a write's
    diff does; None when the page cannot be read. The refs already given stay valid for the
    elements that are still there unchanged (as every snapshot keeps them)."""
    before = baseline(refs, tab_id)
    try:
        result = await bridge.content(tab_id, "read_page", {"maxTokens": max_tokens}, write=False)
    except ToolFailure:
        return None
    if result.snapshot is None:
        return None
    record(refs, tab_id, result.snapshot)
    return changes(before, result.snapshot)


async def navigate_and_wait(bridge: Bridge, tab_id: int, url: str, *, from_url: str, timeout_s: float = 10.0,
                            snapshot: bool = False, after_guard: bool = False) -> dict:
    """Load `url` in the tab and wait until it finished loading and left `from_url`, in one call
    to the extension; its answer as `wait_for_load`'s. `after_guard`: the load starts once the
    navigation guard's installs sent before it are in force (none when the last was refused)."""
    options = {**_load_options(timeout_s, snapshot), "url": url, "fromUrl": from_url}
    if after_guard:
        options["afterGuard"] = True
    answer = await bridge.api("tabs.navigate", tab_id, options, timeout=timeout_s + 5)
    return answer if isinstance(answer, dict) else {}


async def wait_for_load(bridge: Bridge, tab_id: int, *, from_url: str | None = None, timeout_s: float = 10.0,
                        url: str | None = None, snapshot: bool = False) -> dict:
    """Wait until the tab finished loading (and left `from_url`); returns the extension's answer
    ({closed, timedOut, tab}). `url`, the URL being loaded, is sent again by the extension if the
    browser dropped or held its load. `snapshot`: the loaded web page is read in the same call
    (its ExecuteResult as `snapshot`, or its failure as `snapshotFailure`; see `loaded_snapshot`)."""
    options = _load_options(timeout_s, snapshot)
    if from_url is not None:
        options["fromUrl"] = from_url
    if url is not None:
        options["url"] = url
    answer = await bridge.api("tabs.waitForLoad", tab_id, options, timeout=timeout_s + 5)
    return answer if isinstance(answer, dict) else {}
