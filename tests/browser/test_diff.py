"""The post-write snapshot diff: ordered, blind to ref generations and to the focus moving alone."""

from host.browser.diff import diff_snapshots, generation_of
from tests.support.fake_snapshot import snapshot_text


def snap(n: int, *lines: str) -> str:
    return snapshot_text("doc", n, lines, url="http://x.test/", title="T")


def test_no_previous_snapshot_returns_the_whole_snapshot():
    current = snap(1, '- button "Go" [ref=sdoc_1_1]')
    diff = diff_snapshots(None, current)
    assert diff.text == current and diff.changed


def test_generation_changes_alone_are_no_change_and_kept_refs_are_not_repeated():
    before = snap(1, '- button "Go" [ref=sdoc_1_1]', '- text: "Hello"')
    after = snap(2, '- button "Go" [ref=sdoc_1_1]', '- text: "Hello"')
    diff = diff_snapshots(before, after)
    assert not diff.changed
    assert diff.text == ("# Page Changes (sdoc_2)\n\nNo structural change detected.\n\n"
                         "Other refs still hold.")


def test_a_line_whose_element_was_replaced_lists_its_new_ref():
    # A list re-rendered: the same line, another element, a ref of the new snapshot.
    before = snap(1, '- button "Go" [ref=sdoc_1_1]', '- button "Stop" [ref=sdoc_1_2]')
    after = snap(2, '- button "Go" [ref=sdoc_2_3]', '- button "Stop" [ref=sdoc_1_2]')
    diff = diff_snapshots(before, after)
    assert not diff.changed
    renewed = diff.text.split("their old refs no longer work):\n", 1)[1].split("\n\n", 1)[0].split("\n")
    assert renewed == ['- button "Go" [ref=sdoc_2_3]']
    assert "Stop" not in diff.text


def test_a_line_with_a_ref_given_after_the_snapshot_compared_with_is_listed_as_renewed():
    # Compared with an earlier snapshot, a ref a snapshot in between gave is no ref the model had
    # for that line there either.
    before = snap(1, '- button "Go" [ref=sdoc_1_1]', '- button "Stop" [ref=sdoc_1_2]')
    after = snap(3, '- button "Go" [ref=sdoc_2_7]', '- button "Stop" [ref=sdoc_1_2]')
    diff = diff_snapshots(before, after, since="sdoc_1")
    assert diff.renewed == 1 and '- button "Go" [ref=sdoc_2_7]' in diff.text and "Stop" not in diff.text


def test_the_focus_moving_alone_is_no_change_but_the_answer_says_where_it_is():
    before = snap(1, '- listbox "Fruit" [ref=sdoc_1_1] [focused]', '- button "Save" [ref=sdoc_1_2]')
    after = snap(2, '- listbox "Fruit" [ref=sdoc_1_1]', '- button "Save" [ref=sdoc_1_2] [focused]')
    diff = diff_snapshots(before, after)
    assert not diff.changed and "No structural change detected." in diff.text
    assert 'The focus is now on:\n- button "Save" [ref=sdoc_1_2] [focused]' in diff.text
    assert "Fruit" not in diff.text
    # Where it stayed, nothing is said.
    assert "focus" not in diff_snapshots(after, snap(3, '- listbox "Fruit" [ref=sdoc_1_1]',
                                                      '- button "Save" [ref=sdoc_1_2] [focused]')).text
    # A state that moves with it is still a change.
    after = snap(3, '- listbox "Fruit" [ref=sdoc_1_1]', '- button "Save" [pressed] [ref=sdoc_1_2] [focused]')
    assert diff_snapshots(before, after).changed


def test_a_long_change_list_is_cut_to_the_answers_budget_saying_how_much_it_left():
    from host.browser.diff import ANSWER_CHARS

    rows = [f'- link "Existing result number {n}" [ref=sdoc_1_{n}]' for n in range(400)]
    more = [f'- link "Loaded result number {n}" [ref=sdoc_2_{n}]' for n in range(150)]
    diff = diff_snapshots(snap(1, *rows), snap(2, *rows, *more))
    assert diff.added == 150 and len(diff.text) <= ANSWER_CHARS + 400
    shown = diff.text.split("Added/changed:\n", 1)[1].split("\n…", 1)[0].split("\n")
    assert shown == more[:len(shown)] and 40 < len(shown) < 150
    assert f"… and {150 - len(shown)} more (this answer keeps to about 1000 tokens; read_page shows the whole page)" in diff.text


def test_a_change_across_most_of_the_page_is_answered_with_its_new_snapshot():
    rows = [f'- link "Inbox message about topic {n}" [ref=sdoc_1_{n}]' for n in range(120)]
    other = [f'- link "Sent message about topic {n}" [ref=sdoc_2_{n}]' for n in range(120)]
    current = snap(2, '- heading "Sent"', *other)
    diff = diff_snapshots(snap(1, '- heading "Inbox"', *rows), current)
    assert diff.changed and diff.added == 121 and diff.removed == 121
    assert diff.text.startswith("# Page Changes (sdoc_2)\nThe page changed throughout (121 lines added, 121 removed)")
    assert diff.text.endswith(current)
    # A small page changed throughout is still a diff: it fits.
    small = diff_snapshots(snap(1, '- button "A" [ref=sdoc_1_1]'), snap(2, '- button "B" [ref=sdoc_2_1]'))
    assert "Added/changed:" in small.text and "changed throughout" not in small.text


def test_added_lines_keep_new_refs_and_removed_lines_are_normalised():
    before = snap(1, '- textbox "Name" [ref=sdoc_1_1]', '- button "Save" [ref=sdoc_1_2]', '- link "Help" [ref=sdoc_1_3]')
    after = snap(2, '- textbox "Name" [ref=sdoc_2_1]', '- button "Save" [ref=sdoc_2_2]', '- text: "Saved"')
    diff = diff_snapshots(before, after)
    assert diff.changed and diff.added == 1 and diff.removed == 1
    added = diff.text.split("Added/changed:\n", 1)[1].split("\n\n", 1)[0].split("\n")
    assert added == ['- text: "Saved"']
    removed = diff.text.split("Removed:\n", 1)[1].split("\n\n", 1)[0].split("\n")
    assert removed == ['- link "Help" [ref]']


def test_an_element_in_a_new_state_is_one_changed_line_saying_what_it_was():
    before = snap(1, '- textbox "Name" [ref=sdoc_1_1]', '- radio "Thin crust" [checked] [ref=sdoc_1_2] [focused]',
                  '- radio "Deep dish" [ref=sdoc_1_3]', '- button "Save" [ref=sdoc_1_4]')
    after = snap(2, '- textbox "Name" [value="Ada"] [required] [ref=sdoc_2_1]', '- radio "Thin crust" [ref=sdoc_2_2]',
                 '- radio "Deep dish" [checked] [ref=sdoc_2_3] [focused]', '- button "Saved" [ref=sdoc_2_4]')
    diff = diff_snapshots(before, after)
    added = diff.text.split("Added/changed:\n", 1)[1].split("\n\n", 1)[0].split("\n")
    assert added == ['- textbox "Name" [value="Ada"] [required] [ref=sdoc_2_1]  (was: without [value="Ada"] [required])',
                     '- radio "Thin crust" [ref=sdoc_2_2]  (was: [checked])',
                     '- radio "Deep dish" [checked] [ref=sdoc_2_3] [focused]  (was: without [checked])',
                     '- button "Saved" [ref=sdoc_2_4]']
    # A renamed element is another line: its old line went. Only the states that changed are said.
    removed = diff.text.split("Removed:\n", 1)[1].split("\n\n", 1)[0].split("\n")
    assert removed == ['- button "Save" [ref]'] and diff.removed == 1 and diff.added == 4


def test_one_of_two_identical_lines_going_is_a_removal():
    before = snap(1, '- button "Like" [ref=sdoc_1_1]', '- button "Like" [ref=sdoc_1_2]')
    after = snap(2, '- button "Like" [ref=sdoc_2_1]')
    diff = diff_snapshots(before, after)
    assert diff.changed and diff.removed == 1 and diff.added == 0
    assert 'Removed:\n- button "Like" [ref]' in diff.text
    # ...and a second identical line appearing is an addition.
    diff = diff_snapshots(after, before)
    assert diff.changed and diff.added == 1 and 'Added/changed:\n- button "Like" [ref=sdoc_1_2]' in diff.text


def test_rows_that_only_changed_order_are_a_change_shown_in_their_new_order():
    header = '- columnheader "Price" [sort=ascending]'
    before = snap(1, "- table", '  - row: "Basic | 5"', '  - row: "Family | 12"', '  - row: "Pro | 9"', "- text: \"End\"")
    after = snap(2, "- table", '  - row: "Basic | 5"', '  - row: "Pro | 9"', '  - row: "Family | 12"', "- text: \"End\"")
    diff = diff_snapshots(before, after)
    assert diff.changed and diff.moved == 1 and diff.added == diff.removed == 0
    assert "No structural change" not in diff.text and "Added/changed" not in diff.text and "Removed" not in diff.text
    shown = diff.text.split("Order changed; these lines now read:\n", 1)[1].split("\n\n", 1)[0].split("\n")
    assert shown == ['  - row: "Pro | 9"', '  - row: "Family | 12"']
    # A reversed order shows every row in its new place; the header's change is its own section.
    after = snap(3, "- table", header, '  - row: "Pro | 9"', '  - row: "Family | 12"', '  - row: "Basic | 5"', "- text: \"End\"")
    diff = diff_snapshots(before, after)
    assert diff.added == 1 and f"Added/changed:\n{header}" in diff.text
    shown = diff.text.split("now read:\n", 1)[1].split("\n\n", 1)[0].split("\n")
    assert shown == ['  - row: "Pro | 9"', '  - row: "Family | 12"', '  - row: "Basic | 5"'], diff.text


def test_a_long_reordering_lists_only_the_moved_lines():
    rows = [f'  - row: "Item {n:03d}"' for n in range(100)]
    diff = diff_snapshots(snap(1, *rows), snap(2, *rows[1:], rows[0], *rows[:0]))
    assert diff.changed and diff.moved == 1
    assert ('Order changed (1 line moved; read the page for the whole order). Each run of moved lines below the '
            'line now before it:\n  - row: "Item 099"\n  - row: "Item 000"') in diff.text
    # Reversed: the new order from its start, cut at the span's limit.
    diff = diff_snapshots(snap(1, *rows), snap(3, *reversed(rows)))
    assert diff.moved == 99 and "Order changed (99 lines moved); the new order from its start" in diff.text
    shown = diff.text.split("(read the page for the rest):\n", 1)[1].split("\n\n", 1)[0].split("\n")
    assert shown == list(reversed(rows))[:40]


def test_the_truncation_marker_is_not_content():
    before = snap(1, '- text: "a"', "", "[truncated: 3 nodes]")
    after = snap(2, '- text: "a"', "", "[truncated: 9 nodes]")
    assert not diff_snapshots(before, after).changed


def test_generation_of_reads_the_header():
    assert generation_of(snap(7, "")) == "sdoc_7"
    assert generation_of("nonsense") == ""


def test_one_line_inserted_among_rows_alike_is_an_addition_not_a_move():
    # Repetitive rows: the longest common run could pair lines 150 apart and call the rest moved.
    rows = [f'  - row: "Item {n % 50}"' if n % 3 else "  - row" for n in range(700)]
    diff = diff_snapshots(snap(1, *rows), snap(2, *rows[:300], '- text: "new"', *rows[300:]))
    assert (diff.added, diff.removed, diff.moved) == (1, 0, 0), diff.text
    diff = diff_snapshots(snap(1, *rows), snap(2, *rows[:300], *rows[301:]))
    assert (diff.added, diff.removed, diff.moved) == (0, 1, 0), diff.text


def test_new_lines_keep_the_lines_they_are_nested_under():
    lines = ('- button "Actions" [expanded] [ref=sdoc_1_1]', '- menu "Actions"', '  - menuitem "Archive" [ref=sdoc_2_2]',
             '- main', '  - heading "Inbox" [level=1]', '    - text: "3 messages"', '  - list',
             '    - listitem', '      - link "Hello" [ref=sdoc_2_3]', '- text: "Footer"')
    diff = diff_snapshots(snap(1, '- button "Actions" [expanded] [ref=sdoc_1_1]', '- main', '  - list', '    - listitem'),
                          snap(2, *lines))
    added = diff.text.split("Added/changed:\n", 1)[1].split("\n\n", 1)[0].split("\n")
    assert added == ['- menu "Actions"', '  - menuitem "Archive" [ref=sdoc_2_2]', '- main  (unchanged)',
                     '  - heading "Inbox" [level=1]', '    - text: "3 messages"', '  - list  (unchanged)',
                     '    - listitem  (unchanged)', '      - link "Hello" [ref=sdoc_2_3]', '- text: "Footer"'], diff.text
    assert '- button "Actions"' not in diff.text


def test_lines_the_budget_left_out_are_neither_added_nor_removed():
    from host.browser.diff import line_hash

    rows = [f'  - row: "Key {n} | does thing {n}"' for n in range(6)]
    # The read showed rows 0-3 (4 and 5 left out); the write's smaller budget shows rows 0-1 and
    # 4 (2, 3 and 5 left out), and a new line. Only the new line is a change.
    before = snap(1, '- textbox "State" [ref=sdoc_1_1]', *rows[:4])
    after = snap(2, '- textbox "State" [value="Mi"] [ref=sdoc_2_1]', *rows[:2], rows[4])
    diff = diff_snapshots(before, after, previous_hidden=[line_hash(r) for r in rows[4:]],
                          hidden=[line_hash(r) for r in (rows[2], rows[3], rows[5])])
    assert (diff.added, diff.removed) == (1, 0), diff.text  # the field's old line is its changed one's
    assert 'Added/changed:\n- textbox "State" [value="Mi"] [ref=sdoc_2_1]  (was: without [value="Mi"])' in diff.text
    assert diff.text.count("row:") == 0, diff.text
    # Without the hashes, the budget's choices read as changes.
    assert diff_snapshots(before, after).removed == 2


def test_a_line_hash_ignores_the_refs_generation_and_focus_marks():
    from host.browser.diff import line_hash

    assert line_hash('- button "Go" [ref=sab_1_1]') == line_hash('- button "Go" [ref=scd_7_9] [focused]')
    assert line_hash('- button "Go" [ref=sab_1_1]') != line_hash('- button "Stop" [ref=sab_1_1]')
    # The page executor's FNV-1a over UTF-8, base 36 (this value is what the extension computes).
    assert line_hash('- text: "héllo ★"') == "yl096d"


def test_changed_lines_are_shown_under_the_unchanged_lines_they_sit_in():
    before = snap(1, '- form', '  - button "Open In CodePen" [ref=sdoc_1_1]', '- table "Students"', '  - row',
                  '    - button "Last Name" [ref=sdoc_1_2]', '    - button "First Name" [ref=sdoc_1_3]')
    after = snap(2, '- form', '  - button "Open In CodePen" [ref=sdoc_2_1]', '- table "Students"', '  - row',
                 '    - columnheader "Last Name" [sort=descending]', '      - button "Last Name" [ref=sdoc_2_2]',
                 '    - button "First Name" [ref=sdoc_2_3]')
    diff = diff_snapshots(before, after)
    added = diff.text.split("Added/changed:\n", 1)[1].split("\n\n", 1)[0].split("\n")
    # Not under the CodePen button that came before it: under its table and row, marked as such.
    assert added == ['- table "Students"  (unchanged)', '  - row  (unchanged)', '    - columnheader "Last Name" [sort=descending]',
                     '      - button "Last Name" [ref=sdoc_2_2]'], diff.text
    removed = diff.text.split("Removed:\n", 1)[1].split("\n\n", 1)[0].split("\n")
    assert removed == ['- table "Students"  (unchanged)', '  - row  (unchanged)', '    - button "Last Name" [ref]'], diff.text


def test_a_line_left_out_above_and_brought_in_below_is_no_move():
    from host.browser.diff import line_hash

    stock = '  - text: "In stock"'
    # The read showed the first "In stock" (the second left out); the write's snapshot left
    # out the first and shows the second further down. Nothing moved.
    before = snap(1, '- heading "Shop"', stock, '- button "Buy A" [ref=sdoc_1_1]', '- button "Buy B" [ref=sdoc_1_2]')
    after = snap(2, '- heading "Shop"', '- button "Buy A" [ref=sdoc_2_1]', '- button "Buy B" [ref=sdoc_2_2]', stock)
    diff = diff_snapshots(before, after, previous_hidden=[line_hash(stock)], hidden=[line_hash(stock)])
    assert not diff.changed and (diff.added, diff.removed, diff.moved) == (0, 0, 0), diff.text
    # Without the hashes it reads as a move.
    assert diff_snapshots(before, after).moved == 1


def test_a_shuffled_long_table_shows_at_most_the_span_limit_of_moved_lines():
    import random

    from host.browser.diff import MOVED_SPAN_LINES

    rows = [f'  - row: "Item {n:03d}"' for n in range(400)]
    shuffled = rows[:]
    random.Random(7).shuffle(shuffled)
    diff = diff_snapshots(snap(1, *rows), snap(2, *shuffled))
    shown = diff.text.split("the new order from its start (read the page for the rest):\n", 1)[1].split("\n\n", 1)[0]
    assert diff.moved > 100 and shown.split("\n") == shuffled[:MOVED_SPAN_LINES], shown


def test_a_sorted_grid_shows_the_head_of_its_new_order_in_whole_rows():
    # Many separate runs of moved cells read as nothing: the new order from its start is shown,
    # row by row, never cut inside a row.
    amounts = [(n * 37) % 101 for n in range(24)]

    def grid(order: list[int], generation: int) -> list[str]:
        lines = ['- grid "Transactions"', "  - row", '    - columnheader "Day"', '    - columnheader "Amount"']
        for i, n in enumerate(order):
            lines += ["  - row", f'    - gridcell "Day {n}" [ref=sdoc_{generation}_{2 * i + 1}]',
                      f'    - gridcell "${amounts[n]}" [ref=sdoc_{generation}_{2 * i + 2}]']
        return lines

    before = snap(1, *grid(list(range(24)), 1))
    after_lines = grid(sorted(range(24), key=lambda n: amounts[n]), 2)
    diff = diff_snapshots(before, snap(2, *after_lines))
    shown = diff.text.split("the new order from its start (read the page for the rest):\n", 1)[1].split("\n\n", 1)[0]
    lines = shown.split("\n")
    # From the grid's own line and its header row, then the rows, whole, in their new order (the
    # first, which did not move, is first still).
    assert lines[:2] == ['- grid "Transactions"', "  - row"] and len(lines) <= 40, shown
    assert lines == after_lines[:len(lines)] and (len(lines) - 4) % 3 == 0, shown


def test_a_header_whose_sort_moved_is_one_changed_line_each():
    # Structure without refs pairs too when it is the only such line on each side.
    before = snap(1, '- grid "G"', "  - row", '    - columnheader "Date" [sort=ascending]', '    - columnheader "Amount"',
                  '    - columnheader "Day" [level=2]', '    - columnheader "Day" [level=3]')
    after = snap(2, '- grid "G"', "  - row", '    - columnheader "Date"', '    - columnheader "Amount" [sort=descending]',
                 '    - columnheader "Day" [level=4]', '    - columnheader "Day" [level=5]')
    diff = diff_snapshots(before, after)
    added = diff.text.split("Added/changed:\n", 1)[1].split("\n\n", 1)[0].split("\n")
    assert added[2:4] == ['    - columnheader "Date"  (was: [sort=ascending])',
                          '    - columnheader "Amount" [sort=descending]  (was: without [sort=descending])']
    # Two alike on each side are not guessed at: they stay an addition and a removal each.
    removed = diff.text.split("Removed:\n", 1)[1].split("\n\n", 1)[0]
    assert removed.count('columnheader "Day"') == 2 and "Date" not in removed, diff.text


def test_the_focus_moving_onto_the_element_acted_on_is_not_said_again():
    before = snap(1, '- textbox "Name" [ref=sdoc_1_1] [focused]', '- button "Save" [ref=sdoc_1_2]')
    after = snap(2, '- textbox "Name" [ref=sdoc_1_1]', '- button "Save" [ref=sdoc_1_2] [focused]')
    assert "focus" not in diff_snapshots(before, after, acted=["sdoc_1_2"]).text
    assert "The focus is now on:" in diff_snapshots(before, after, acted=["sdoc_1_1"]).text
