"""Key definitions and the accessibility-tree text (refs, stitching, passwords, budget)."""

from __future__ import annotations

import pytest

from host.tools.failure import ToolFailure
from host.browser.l2.ax_tree import RefMark, build_lines, fit, frame_from_nodes, innermost_candidates, is_interactive
from host.browser.l2.keys import ALT, CONTROL, SHIFT, for_char, parse_combo


def test_key_combinations():
    combo = parse_combo("Control+Shift+a")
    assert combo.modifiers == ("Control", "Shift") and combo.mask == CONTROL | SHIFT
    assert (combo.key.key, combo.key.code, combo.key.key_code) == ("a", "KeyA", 65)
    assert parse_combo("ctrl++").key.code == "Equal" and parse_combo("+").key.key == "+"
    assert parse_combo("Enter").key.text == "\r" and parse_combo("esc").key.key == "Escape"
    assert parse_combo("Alt").key is None and parse_combo("Alt").mask == ALT
    assert parse_combo("Shift+Tab").describe() == "Shift+Tab"
    for bad in ("Hyper+q", "Control+Nope", "a++b", "", "Control+"):
        with pytest.raises(ToolFailure) as caught:
            parse_combo(bad)
        assert caught.value.code == "invalid_params"


def test_characters_map_to_us_keys():
    assert for_char("A")[1] is True and for_char("A")[0].code == "KeyA"
    assert for_char("!")[0].code == "Digit1" and for_char("!")[1] is True
    assert for_char("\n")[0].key == "Enter"
    key, shifted = for_char("é")
    assert (key.key, key.code, key.key_code, key.text, shifted) == ("é", "", 0, "é", False)


def node(node_id, role, name="", children=(), backend=None, ignored=False, **props):
    return {"nodeId": node_id, "role": {"value": role}, "name": {"value": name}, "childIds": list(children),
            "backendDOMNodeId": backend, "ignored": ignored,
            "properties": [{"name": k, "value": {"value": v}} for k, v in props.items()]}


def sample():
    main = frame_from_nodes("tab/M", None, "M", "L", "http://a.test/", [
        node("1", "RootWebArea", "Main", ["2", "3", "4", "5", "6"], backend=1),
        node("2", "heading", "Title", ["20"], backend=2, level=1),
        node("20", "StaticText", "Title", backend=20),
        node("3", "textbox", "Password", backend=3, focusable=True),
        node("4", "generic", "", ["40"], backend=4),
        node("40", "StaticText", "Plain box", backend=40),
        node("5", "Iframe", "Ads", backend=5),
        node("6", "paragraph", "", ["60"], backend=6),
        node("60", "StaticText", "x" * 300, backend=60),
    ])
    inner = frame_from_nodes("S/F", "S", "F", "L2", "http://b.test/", [
        node("1", "RootWebArea", "Inner", ["2"], backend=1), node("2", "button", "Inside", backend=7)],
        out_of_process=True)
    return main, inner


def test_lines_stitch_frames_mark_refs_and_never_echo_passwords():
    main, inner = sample()
    marks = {3: RefMark("c1", "textbox", "password"), 4: RefMark("c2", "clickable", None, ("listener=click",)),
             7: RefMark("c3", "button")}
    lines = build_lines(main, lambda f, n: marks.get(n.get("backendDOMNodeId")) if f is main or n["nodeId"] == "2" and f is inner else None,
                        lambda f, n: inner)
    text = "\n".join(f"{'  ' * line.depth}- {line.body}" for line in lines)
    assert '- heading "Title" [level=1]' in text and 'text: "Title"' not in text
    assert '- textbox "Password" [type=password] [ref=c1]' in text
    assert '- clickable "Plain box" [listener=click] [ref=c2]' in text
    assert '- iframe "Ads" [out-of-process]\n  - button "Inside" [ref=c3]' in text
    assert '…"' in text  # long text is clipped
    budget = fit(lines, 60)
    assert budget.dropped > 0 and any("[ref=c3]" in line for line in budget.lines)
    assert not any(line.strip().startswith("- text:") for line in budget.lines)


def test_listener_candidates_are_innermost_and_bounded():
    main, _ = sample()
    picked = innermost_candidates(main, taken=set(), limit=10)
    assert [n["nodeId"] for n in picked] == ["4", "6"]  # generic and paragraph; the root holds interactive nodes
    assert innermost_candidates(main, taken={4}, limit=1)[0]["nodeId"] == "6"
    assert is_interactive(main.nodes["3"]) and not is_interactive(main.nodes["5"])


def test_a_field_named_as_a_credential_never_shows_its_value():
    from host.browser.l2.ax_tree import attributes

    def field(name: str, value: str) -> dict:
        return {"nodeId": "9", "role": {"value": "textbox"}, "name": {"value": name}, "value": {"value": value},
                "backendDOMNodeId": 9}

    assert attributes(field("Account password", "hunter2")) == ["value hidden"]
    assert attributes(field("PIN", "1234")) == ["value hidden"]
    assert attributes(field("Search", "shoes")) == ['value="shoes"']
