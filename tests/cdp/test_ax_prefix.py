"""Joining a document read in pieces: each piece's top nodes go under the element it was found
in, in document order; an element descended through that the tree leaves out passes its
children through; refs the budget drops are named so the read can forget them."""

from __future__ import annotations

from host.browser.l2.ax_prefix import _join
from host.browser.l2.ax_tree import Line, fit, frame_from_nodes, role_of

from tests.cdp.test_ax_tree_roles import node, text_of


def with_parent(item: dict, parent: str) -> dict:
    return {**item, "parentId": parent}


def test_pieces_are_joined_under_the_elements_they_were_found_in_in_order():
    kinds = ["r", "d", "c", "d", "c", "c", "c"]
    parents = [-1, 0, 1, 1, 3, 3, 1]
    backends = [1, 10, 20, 30, 40, 50, 60]
    pieces = {
        ("r", 1): [node("1", "RootWebArea", "Shop", ["999"], backend=1)],  # the tree's own children are replaced
        ("d", 10): [with_parent(node("10", "main", "", ["20", "30"], backend=10), "1")],
        ("c", 20): [with_parent(node("20", "button", "First", ["21"], backend=20), "10"),
                    with_parent(node("21", "StaticText", "First", backend=21), "20")],
        ("d", 30): [],  # display: contents: no node of its own
        # A custom element the tree leaves out: its shadow root's children came back as two pieces of top nodes.
        ("c", 40): [with_parent(node("41", "link", "Second", backend=41), "x"),
                    with_parent(node("42", "link", "Third", backend=42), "x")],
        ("c", 50): [],  # a text node the tree folds away
        ("c", 60): [with_parent(node("60", "textbox", "Last", backend=60), "10")],
    }
    frame = frame_from_nodes("tab/M", None, "M", "L", "http://a.test/", _join(kinds, parents, backends, pieces))
    assert role_of(frame.nodes[frame.root_id or ""]) == "RootWebArea"
    order = [n.get("name", {}).get("value") for n in frame.walk() if n["role"]["value"] in ("button", "link", "textbox")]
    assert order == ["First", "Second", "Third", "Last"]
    text = text_of(frame)
    assert '- main\n  - button "First" [ref=c20]\n  - link "Second" [ref=c41]' in text
    passed = next(n for n in frame.nodes.values() if n["nodeId"] == "tw-30")
    assert passed["ignored"] and passed["childIds"] == ["41", "42"]


def test_refs_on_lines_the_budget_drops_are_named():
    lines = [Line("ref", 0, f'button "B{i}" [ref=c{i}]', f"c{i}") for i in range(1000)]
    rendered = fit(lines, 100)
    shown = {line.split("[ref=")[1].rstrip("]") for line in rendered.lines}
    assert rendered.unshown_refs and not shown & set(rendered.unshown_refs)
    assert shown | set(rendered.unshown_refs) == {f"c{i}" for i in range(1000)}
    assert rendered.unshown_refs[0] == f"c{len(shown)}"  # dropped from the end of the page
