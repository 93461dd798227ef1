"""The REPL's words: a navigation that ended on an error page is a failure (never beside an
ALLOW), a failed call shows the decision and the outcome apart, audit rows follow each code with
its words and name the thread's title, and host answers print as readable lines with clock times."""

from __future__ import annotations

import time

from host.repl import render
from tests.support.fake_snapshot import ref_line, snapshot_text

DIVIDER = "--- new page snapshot ---"


def navigated(url: str, page: str, tool: str = "navigate") -> dict:
    """A navigate result as the host sends it after the load."""
    return {"ok": True, "tool": tool, "tabId": 3, "details": {"url": url},
            "text": f"[tabId=3] Navigated to {url}: the tab now shows {url}; every earlier ref is invalid.\n"
                    f"{DIVIDER}\n{page}"}


def test_chromes_error_page_is_a_failed_navigation():
    url = "https://no-such-host.invalid/"
    shown = render.tool_result(navigated(url, "(no snapshot: inject_failed: cannot run in tab 3: Frame with ID 0 is "
                                              "showing error page)"))
    first, *rest = shown.splitlines()
    assert first == (f"failed navigate [tab 3]: the navigation failed: Chrome showed its error page instead of {url}: "
                     "the site could not be reached (no such host, refused, timed out or offline); look at the tab "
                     "for Chrome's own words")
    assert "ALLOW" not in shown and not shown.startswith("ok")
    assert rest == [f"  the browser said: Navigated to {url}: the tab now shows {url}; every earlier ref is invalid."]


def test_an_http_error_page_is_a_failed_navigation_and_a_real_page_is_not():
    url = "http://127.0.0.1:8000/missing"
    page = snapshot_text("ab", 1, [ref_line("heading", "Not Found", "sab_1_1")], url=url, title="404 Not Found")
    shown = render.tool_result(navigated(url, page))
    assert shown.startswith("failed navigate [tab 3]: the navigation failed: the server answered with an HTTP error: "
                            "the page is titled '404 Not Found'")
    fine = snapshot_text("ab", 1, [ref_line("heading", "Error 404 explained", "sab_1_1")], url=url, title="HTTP codes")
    assert render.tool_result(navigated(url, fine)).startswith("ok navigate [tab 3]\n")
    opened = navigated(url, page, tool="tab_open")
    assert render.tool_result(opened).startswith("failed tab_open [tab 3]: the navigation failed")


def test_a_call_allowed_then_failed_shows_the_decision_in_words_not_allow():
    shown = render.tool_result({"ok": False, "tool": "read_page", "tabId": 3, "text": "...",
                                "error": {"code": "inject_failed", "message": "cannot run in tab 3", "phase": "execute"},
                                "details": {"decision": {"verdict": "allow", "code": "read_allowed", "flags": []}}})
    assert shown.splitlines() == [
        "failed read_page [tab 3]: inject_failed (phase execute)",
        "  cannot run in tab 3",
        "  the gatekeeper allowed it (read_allowed: it only reads); it was sent, and then failed"]
    ok = render.tool_result({"ok": True, "tool": "read_page", "tabId": 3, "text": "[tabId=3] # Page Snapshot (s1)",
                             "details": {"decision": {"verdict": "allow", "code": "read_allowed", "flags": []}}})
    assert ok.splitlines()[0] == "ok read_page [tab 3]  gatekeeper ALLOW (read_allowed): it only reads"


def test_a_denial_says_its_code_in_words_and_its_reason():
    shown = render.tool_result({"ok": False, "tool": "click", "tabId": 3, "text": "...",
                                "error": {"code": "denied", "message": "denied (scope_lock): ...", "phase": "authorize"},
                                "details": {"verdict": "deny", "reasonCode": "scope_lock",
                                            "reason": "\"https://b.example\" is outside this task's scope lock"}})
    assert "  gatekeeper DENY (scope_lock): outside this task's scope lock - \"https://b.example\" is outside" in shown


def test_audit_rows_follow_each_code_with_its_words_and_name_the_thread():
    at = time.mktime((2026, 12, 6, 9, 5, 7, 0, 0, -1))
    rows = [{"seq": 1, "at": at, "kind": "decision", "thread_id": "t1", "tool": "read_page",
             "target_origin": "https://a.example", "verdict": "allow", "code": "read_allowed", "detail": "initial"},
            {"seq": 2, "at": at, "kind": "approval", "thread_id": "t1", "tool": "click",
             "target_origin": "https://a.example", "approval_decision": "acceptForSession"},
            {"seq": 3, "at": at, "kind": "outcome", "thread_id": "t2", "tool": "navigate",
             "target_origin": "https://b.example", "tool_outcome": "refused:target_changed",
             "detail": "the tab was at https://a.example"}]
    lines = render.audit_rows(rows, titles={"t1": "Find flights"}).splitlines()
    assert lines == [
        "#1 09:05:07 decision t1: read_page @ https://a.example  ALLOW (read_allowed): it only reads  thread "
        "'Find flights'",
        "#2 09:05:07 approval t1: click @ https://a.example  approval acceptForSession (allowed for this task)  thread "
        "'Find flights'",
        "#3 09:05:07 outcome  t2: navigate @ https://b.example  outcome refused:target_changed (not run: the tab or "
        "element changed after the check); the tab was at https://a.example"]


def test_host_answers_read_as_lines_with_clock_times():
    at = time.mktime((2026, 12, 6, 14, 30, 0, 0, 0, -1))
    shown = render.readable({"pid": 42, "startedAt": at, "connected": True,
                             "routes": {"tabs": [7, 9], "lastWrite": None}, "clients": [{"client": "repl"}]})
    assert shown.splitlines() == ["pid        42", "startedAt  14:30:00", "connected  yes", "routes",
                                  "  tabs       7, 9", "  lastWrite  -", "clients", "    client  repl"]
    assert render.clock(at * 1000) == "14:30:00"  # the pages' milliseconds too
