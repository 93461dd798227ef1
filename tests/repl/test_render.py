"""What people read at the prompt: snapshots, diffs, tool results, decisions, tables."""

from __future__ import annotations

from host.repl import render
from host.repl.style import Style
from host.repl.views import View
from tests.support.fake_snapshot import ref_line, snapshot_text

SNAPSHOT = snapshot_text("ab", 1, [ref_line("button", "Go", "sab_1_1")], url="https://x.example/", title="X")
DIFF = ("# Page Changes (sab_2)\n\nAdded/changed:\n- text \"Saved\"\n\nRemoved:\n- button \"Save\" [ref]\n\n"
        "The same lines with new refs (the elements were replaced; their old refs no longer work):\n"
        "- button \"Go\" [ref=sab_2_1]")


def test_diff_marks_added_and_removed_lines():
    out = render.diff(DIFF)
    assert '+ - text "Saved"' in out
    assert '- - button "Save" [ref]' in out
    assert 'their old refs no longer work):\n- button "Go" [ref=sab_2_1]' in out


def test_colour_highlights_refs_and_verdicts_only_when_enabled():
    coloured = render.snapshot(SNAPSHOT, Style(True))
    assert "\x1b[36m[ref=sab_1_1]\x1b[0m" in coloured
    assert render.snapshot(SNAPSHOT) == SNAPSHOT  # plain: unchanged
    assert render.verdict("deny", Style(True)) == "\x1b[1;31mDENY\x1b[0m"


def test_a_write_result_shows_its_diff_and_a_failure_its_decision():
    ok = render.tool_result({"ok": True, "tool": "click", "tabId": 3, "text": "[tabId=3] Clicked.\n\n" + DIFF,
                             "details": {"decision": {"verdict": "allow", "code": "rule_allow"}}})
    assert ok.startswith("ok click [tab 3]  gatekeeper ALLOW (rule_allow): a permission rule allows it\nClicked.")
    assert '+ - text "Saved"' in ok
    failed = render.tool_result({"ok": False, "tool": "type", "tabId": 3, "text": "...",
                                 "error": {"code": "approval_required", "message": "needs the user's approval",
                                           "phase": "authorize"},
                                 "details": {"verdict": "ask", "reasonCode": "sensitive_payload", "reason": "a card number",
                                             "flags": ["sensitive_payload"]}})
    assert failed.split("\n") == ["failed type [tab 3]: approval_required (phase authorize)",
                                  "  needs the user's approval",
                                  "  gatekeeper ASK (sensitive_payload): it carries sensitive data - a card number",
                                  "  flags: sensitive_payload"]


def test_a_decision_lists_every_step_of_its_trace():
    text = render.decision({"tool": "click", "target_origin": "https://x.example", "verdict": "deny",
                            "code": "rule_deny", "reason": "denied by a rule", "policy": "untrusted", "threadId": "t",
                            "trace": [{"step": "read", "outcome": "pass", "detail": "the call writes"},
                                      {"step": "rule_deny", "outcome": "hit", "detail": "denied"}]})
    assert text.split("\n")[0] == ("click @ https://x.example -> DENY (rule_deny): a permission rule denies it   policy "
                                   "Ask before changes (untrusted), thread t")
    assert "   1. read       pass  the call writes" in text
    assert "   2. rule_deny  HIT   denied" in text


def test_tables_align_coloured_cells_and_say_when_empty():
    rows = [("a", render.verdict("allow", Style(True))), ("bbbb", "x" * 100)]
    lines = render.table(rows, ("id", "verdict")).split("\n")
    assert lines[1].index("\x1b") == lines[2].index("x")  # colour codes take no room
    assert lines[2].endswith("x" * 77 + "...")
    assert render.table([], ("id",)).endswith("(none)")


def test_views_keep_the_data_and_read_camel_case_fields():
    view = View({"ok": True, "tabId": 4, "text": "hi"}, lambda d, s: f"view of {d['tabId']}", Style(False))
    assert repr(view) == "view of 4"
    assert (view.tab_id, view["text"], view.ok) == (4, "hi", True)
    assert view == {"ok": True, "tabId": 4, "text": "hi"}


def test_a_failure_about_the_tab_points_at_tw_tabs():
    from host.repl.render import tool_result

    shown = tool_result({"ok": False, "tool": "read_page", "tabId": 1843250117,
                         "error": {"code": "not_web_page", "message": 'tab 1843250117 shows "about:blank", not an '
                                   "http(s) page; load one into it with navigate, or pass the tabId of a web page "
                                   "from tabs_list", "phase": "resolve"}})
    assert shown.splitlines()[-1] == ("  tw.tabs() lists the open tabs with their ids; pass tab=<id>, or tw.use(<id>) "
                                      "to make one the default")
