"""The deep read's tree text decides from the shared role tables: actionable containers list their
children, focusable structure gets a ref, range widgets show value and bounds."""

from __future__ import annotations

from host.browser.l2.ax_tree import RefMark, build_lines, frame_from_nodes, is_interactive


def node(node_id, role, name="", children=(), backend=0, value=None, **props):
    out = {"nodeId": node_id, "role": {"value": role}, "name": {"value": name}, "childIds": list(children),
           "backendDOMNodeId": backend, "properties": [{"name": k, "value": {"value": v}} for k, v in props.items()]}
    if value is not None:
        out["value"] = {"value": value}
    return out


def text_of(frame) -> str:
    def ref_for(_frame, n):
        return RefMark(f"c{n['backendDOMNodeId']}", n["role"]["value"]) if is_interactive(n) else None

    lines = build_lines(frame, ref_for, lambda f, n: None)
    return "\n".join(f"{'  ' * line.depth}- {line.body}" for line in lines)


def test_an_expanded_tree_item_lists_its_children_with_refs():
    frame = frame_from_nodes("tab/M", None, "M", "L", "http://a.test/", [
        node("1", "RootWebArea", "Page", ["2"], backend=1),
        node("2", "tree", "Files", ["3"], backend=2),
        node("3", "treeitem", "Projects", ["4", "5"], backend=3, focusable=True, expanded=True),
        node("4", "StaticText", "Projects", backend=4),
        node("5", "group", "", ["6"], backend=5),
        node("6", "treeitem", "notes.txt", backend=6, focusable=True),
    ])
    text = text_of(frame)
    assert '  - treeitem "Projects" [expanded] [ref=c3]\n    - treeitem "notes.txt" [ref=c6]' in text
    assert 'text: "Projects"' not in text and "group" not in text


def test_a_focusable_article_gets_a_ref_and_keeps_its_text_and_button():
    frame = frame_from_nodes("tab/M", None, "M", "L", "http://a.test/", [
        node("1", "RootWebArea", "Page", ["2", "7"], backend=1),
        node("2", "article", "Sushi", ["3", "4"], backend=2, focusable=True),
        node("3", "StaticText", "Fresh fish", backend=3),
        node("4", "button", "Bookmark", backend=4, focusable=True),
        node("7", "article", "", ["8"], backend=7),
        node("8", "StaticText", "Plain", backend=8),
    ])
    text = text_of(frame)
    assert '- article "Sushi" [ref=c2]\n  - text: "Fresh fish"\n  - button "Bookmark" [ref=c4]' in text
    assert '- article\n  - text: "Plain"' in text


def test_range_widgets_show_value_and_bounds():
    frame = frame_from_nodes("tab/M", None, "M", "L", "http://a.test/", [
        node("1", "RootWebArea", "Page", ["2", "3"], backend=1),
        node("2", "slider", "Red", backend=2, value=128, focusable=True, valuemin=0, valuemax=255),
        node("3", "spinbutton", "Day", backend=3, value=2, focusable=True, valuetext="Tuesday", valuemin=1, valuemax=7),
    ])
    text = text_of(frame)
    assert '- slider "Red" [value=128] [min=0] [max=255] [ref=c2]' in text
    assert '- spinbutton "Day" [value="Tuesday"] [min=1] [max=7] [ref=c3]' in text


def test_landmarks_survive_the_budget():
    from host.browser.l2.ax_tree import fit

    frame = frame_from_nodes("tab/M", None, "M", "L", "http://a.test/", [
        node("1", "RootWebArea", "Page", ["2", "4"], backend=1),
        node("2", "navigation", "Site", ["3"], backend=2),
        node("3", "StaticText", "x" * 200, backend=3),
        node("4", "list", "Parts", ["5"], backend=4),
        node("5", "StaticText", "y" * 200, backend=5),
    ])
    lines = build_lines(frame, lambda f, n: None, lambda f, n: None)
    kept = fit(lines, 20).lines
    assert kept == ['- navigation "Site"']
