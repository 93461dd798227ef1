"""Which snapshot a write's diff is told against: the latest, or an earlier one the page went
back to (a popover or modal closed, the page behind it back in the tree with its old refs)."""

from host.browser import snapshots
from host.browser.refmap import EARLIER_BASELINES, RefMap
from host.browser.wire import PageSnapshot, SnapshotRef
from tests.support.fake_snapshot import ref_line, snapshot_text

PAGE = [("checkbox", "Wi-Fi"), ("slider", "Volume"), ("radio", "Small"), ("radio", "Medium"), ("radio", "Large"),
        ("combobox", "Country"), ("checkbox", "I accept the terms"), ("button", "Save")]


def page_snapshot(number: int, elements: list[tuple[str, str, str]], extra: tuple[str, ...] = ()) -> PageSnapshot:
    """Snapshot `number` of document "doc": a line per (role, name, ref), then `extra` lines."""
    lines = [ref_line(role, name, ref) for role, name, ref in elements] + list(extra)
    text = snapshot_text("doc", number, lines, url="http://site.test/a", title="A")
    refs = [SnapshotRef(ref=ref, role=role, name=name, tag=role) for role, name, ref in elements]
    return PageSnapshot(id=f"sdoc_{number}", doc_token="doc", snapshot_id=number, text=text, refs=refs,
                        ref_count=len(refs))


def record(refs: RefMap, snapshot: PageSnapshot, *, baseline: bool = True) -> None:
    snapshots.record(refs, 1, snapshot, baseline=baseline)


def the_page(number: int, country: str) -> PageSnapshot:
    """The page, its elements keeping the refs snapshot 1 gave them."""
    return page_snapshot(number, [(role, name, f"sdoc_1_{i}") for i, (role, name) in enumerate(PAGE, 1)],
                         (f'- text: "{country}"',))


def popover(number: int) -> PageSnapshot:
    """The popover open: the page behind it hidden from the tree."""
    return page_snapshot(number, [("listbox", "Country", f"sdoc_{number}_1")] + [
        ("option", name, f"sdoc_{number}_{i}") for i, name in enumerate(("France", "Germany", "Italy"), 2)])


def test_a_page_back_from_behind_a_popover_is_told_against_the_snapshot_before_it():
    refs = RefMap()
    record(refs, the_page(1, "France"))
    record(refs, popover(2))
    before = snapshots.baseline(refs, 1)
    diff = snapshots.changes(before, the_page(3, "Germany"))
    header, explained = diff.text.split("\n")[:2]
    assert header == "# Page Changes (sdoc_3) since sdoc_1"
    assert explained.startswith("Told against sdoc_1, an earlier snapshot than the latest")
    assert '- text: "Germany"' in diff.text and '- text: "France"' in diff.text
    # The page's lines are not repeated: their refs from snapshot 1 work as they are.
    assert "Wi-Fi" not in diff.text and "Save" not in diff.text
    # What this step did is still told from the latest snapshot: the listbox went, the page came.
    assert diff.changed and diff.removed == 4 and diff.added == len(PAGE) + 1


def test_a_write_that_changed_a_line_or_two_is_told_against_the_latest_snapshot():
    refs = RefMap()
    record(refs, the_page(1, "France"))
    record(refs, the_page(2, "Italy"))
    diff = snapshots.changes(snapshots.baseline(refs, 1), the_page(3, "Germany"))
    assert diff.text.split("\n")[0] == "# Page Changes (sdoc_3)"
    assert '- text: "Germany"' in diff.text and '- text: "Italy"' in diff.text and "France" not in diff.text


def test_a_page_that_changed_throughout_since_every_snapshot_is_told_against_the_latest():
    refs = RefMap()
    record(refs, the_page(1, "France"))
    record(refs, popover(2))
    other = page_snapshot(3, [("link", f"Result {n}", f"sdoc_3_{n}") for n in range(1, 13)])
    diff = snapshots.changes(snapshots.baseline(refs, 1), other)
    assert diff.text.split("\n")[0] == "# Page Changes (sdoc_3)"
    assert "Result 12" in diff.text


def test_the_ref_map_keeps_a_few_earlier_baselines_of_the_document_only():
    refs = RefMap()
    for number in range(1, 5):
        record(refs, the_page(number, f"Country {number}"))
    kept = refs.earlier_texts(1)
    assert [label for label, _, _ in kept] == [f"sdoc_{n}" for n in range(3, 3 - EARLIER_BASELINES, -1)]
    assert '"Country 3"' in kept[0][1]
    # A full read is no baseline, and is not kept as one.
    record(refs, the_page(5, "Full"), baseline=False)
    assert [label for label, _, _ in refs.earlier_texts(1)][0] == "sdoc_4"
    assert snapshots.baseline(refs, 1).text == ""
    # Another document starts afresh.
    refs.record(1, "new", 1, [], "text")
    assert refs.earlier_texts(1) == ()


def test_a_page_back_with_other_elements_than_before_is_told_against_the_latest_snapshot():
    # The page behind the popover was rendered anew: its elements have new refs, so telling it
    # against the snapshot before the popover would list every line again as renewed.
    refs = RefMap()
    record(refs, the_page(1, "France"))
    record(refs, popover(2))
    anew = page_snapshot(3, [(role, name, f"sdoc_3_{i}") for i, (role, name) in enumerate(PAGE, 1)], ('- text: "Germany"',))
    diff = snapshots.changes(snapshots.baseline(refs, 1), anew)
    assert diff.text.split("\n")[0] == "# Page Changes (sdoc_3)"
    assert "[ref=sdoc_3_1]" in diff.text
