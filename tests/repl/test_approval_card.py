"""An approval at the REPL shows what the side panel's card shows, with invisible and reordering
characters as markers: a right-to-left override in the model's text or in a page's element name
cannot reorder the line, and a terminal escape in page text is never written to the terminal."""

from __future__ import annotations

from host.repl.chat import EventPrinter, approval_card
from host.repl.style import Style

REQUEST = {
    "tool": "type", "label": "Type", "targetOrigin": "https://shop.example", "code": "policy_default",
    "reason": "the “Ask before changes” policy asks before type",
    "params": {"element": "Comment\u202e field", "ref": "s1_1_4", "text": "pay\u200b 100"},
    "targetLine": '- textbox "Note \u202egnp.exe" [ref=s1_1_4]\n- button "Go\x1b[2J" [ref=s1_1_5]',
}


def test_invisible_characters_are_shown_as_markers():
    card = approval_card({"approvalId": "a1", "request": REQUEST}, Style(False), answer_hint=False)
    assert card.splitlines() == [
        "approval a1: Type @ https://shop.example - the “Ask before changes” policy asks before type",
        '  params: {"element": "Comment⟨U+202E⟩ field", "ref": "s1_1_4", "text": "pay⟨U+200B⟩ 100"}',
        '  element: - textbox "Note ⟨U+202E⟩gnp.exe" [ref=s1_1_4]',
        '           - button "Go⟨U+001B⟩[2J" [ref=s1_1_5]',
    ]


def test_the_tool_line_marks_them_too(capsys):
    printer = EventPrinter("t1", Style(False))
    printer.feed({"type": "item.start", "threadId": "t1", "itemId": "i1", "kind": "tool_call",
                  "meta": {"label": "Type", "paramsSummary": '{"text": "a\u202eb"}'}})
    assert capsys.readouterr().out == 'tool Type {"text": "a⟨U+202E⟩b"}\n'
