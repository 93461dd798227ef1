"""The post-write snapshot diff: set-based, blind to ref generations."""

from host.browser.diff import diff_snapshots, generation_of
from tests.support.fake_snapshot import snapshot_text


def snap(n: int, *lines: str) -> str:
    return snapshot_text("doc", n, lines, url="http://x.test/", title="T")


def test_no_previous_snapshot_returns_the_whole_snapshot():
    current = snap(1, '- button "Go" [ref=sdoc_1_1]')
    diff = diff_snapshots(None, current)
    assert diff.text == current and diff.changed


def test_generation_changes_alone_are_no_change():
    before = snap(1, '- button "Go" [ref=sdoc_1_1]', '- text: "Hello"')
    after = snap(2, '- button "Go" [ref=sdoc_2_1]', '- text: "Hello"')
    diff = diff_snapshots(before, after)
    assert not diff.changed
    assert diff.text.startswith("# Page Changes (sdoc_2)")
    assert "No structural change detected." in diff.text
    assert 'Current interactive refs:\n- button "Go" [ref=sdoc_2_1]' in diff.text


def test_the_focus_moving_alone_is_no_change_but_the_refs_say_where_it_is():
    before = snap(1, '- listbox "Fruit" [ref=sdoc_1_1] [focused]', '- button "Save" [ref=sdoc_1_2]')
    after = snap(2, '- listbox "Fruit" [ref=sdoc_2_1]', '- button "Save" [ref=sdoc_2_2] [focused]')
    diff = diff_snapshots(before, after)
    assert not diff.changed and "No structural change detected." in diff.text
    assert '- button "Save" [ref=sdoc_2_2] [focused]' in diff.text.split("Current interactive refs:\n", 1)[1]
    # A state that moves with it is still a change.
    after = snap(3, '- listbox "Fruit" [ref=sdoc_3_1]', '- button "Save" [pressed] [ref=sdoc_3_2] [focused]')
    assert diff_snapshots(before, after).changed


def test_added_lines_keep_new_refs_and_removed_lines_are_normalised():
    before = snap(1, '- textbox "Name" [ref=sdoc_1_1]', '- button "Save" [ref=sdoc_1_2]')
    after = snap(2, '- textbox "Name" [value="Ada"] [ref=sdoc_2_1]', '- button "Save" [ref=sdoc_2_2]', '- text: "Saved"')
    diff = diff_snapshots(before, after)
    assert diff.changed and diff.added == 2 and diff.removed == 1
    added = diff.text.split("Added/changed:\n", 1)[1].split("\n\n", 1)[0].split("\n")
    assert added == ['- textbox "Name" [value="Ada"] [ref=sdoc_2_1]', '- text: "Saved"']
    removed = diff.text.split("Removed:\n", 1)[1].split("\n\n", 1)[0].split("\n")
    assert removed == ['- textbox "Name" [ref]']


def test_duplicate_lines_collapse_like_sets():
    before = snap(1, '- button "Like" [ref=sdoc_1_1]', '- button "Like" [ref=sdoc_1_2]')
    after = snap(2, '- button "Like" [ref=sdoc_2_1]')
    assert not diff_snapshots(before, after).changed


def test_the_truncation_marker_is_not_content():
    before = snap(1, '- text: "a"', "", "[truncated: 3 nodes]")
    after = snap(2, '- text: "a"', "", "[truncated: 9 nodes]")
    assert not diff_snapshots(before, after).changed


def test_generation_of_reads_the_header():
    assert generation_of(snap(7, "")) == "sdoc_7"
    assert generation_of("nonsense") == ""
