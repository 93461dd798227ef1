"""The audit in one plain vocabulary: each decision written once (a read judged again just before
it runs adds no row when nothing changed), a navigation's outcome at the place the call went
(saying where the tab was), and `audit list` / `export` following each code with its words and
naming each row's thread by its title as well as its id. The chain still verifies."""

from __future__ import annotations

import json
import time
from pathlib import Path

from tests.gatekeeper.test_cli import tabwarden


def _seed(home: Path) -> Path:
    """Rows the way the one authorisation path writes them, for two threads, one with a title."""
    from host.engine.schema import COMPONENT, MIGRATIONS
    from host.gatekeeper.service import CheckRequest, Gatekeeper
    from host.store import Store

    db = home / "data" / "tabwarden.sqlite3"
    store = Store(db)
    store.migrate(COMPONENT, MIGRATIONS)
    store.execute("INSERT INTO eng_threads (id, title, created_at, updated_at, revision, next_seq) "
                  "VALUES ('t1', 'Find flights', ?, ?, 1, 1)", (time.time(), time.time()))
    gk = Gatekeeper(store, user_policy=home / "none.json", managed_policy=home / "none2.json")
    gk.bind_browser_session("browser-1")
    read = dict(thread_id="t1", tool="read_page", params={}, origin="https://a.example", call_id="c1")
    gk.check(CheckRequest(**read))
    gk.check(CheckRequest(**read, phase="dispatch"))  # the same judgement again: no second row
    gk.record_outcome(thread_id="t1", tool="read_page", outcome="ok", target_origin="https://a.example", call_id="c1")
    gk.add_rule({"tool": "type", "origin": "https://a.example", "verdict": "deny"})
    typed = dict(thread_id="t1", tool="type", params={"ref": "a", "text": "x"}, origin="https://a.example", call_id="c0")
    gk.check(CheckRequest(**typed))  # denied: the rule is named on the row by its id and pattern
    click = dict(thread_id="t1", tool="click", params={"ref": "a"}, origin="https://a.example", call_id="c2",
                 policy="auto")
    gk.check(CheckRequest(**click))
    gk.check(CheckRequest(**click, phase="dispatch"))  # a write's check under the hold stays on record
    go = dict(thread_id="t2", tool="navigate", params={"url": "https://b.example/x"}, origin="https://a.example",
              call_id="c3", policy="auto")
    gk.check(CheckRequest(**go))
    gk.check(CheckRequest(**go, phase="dispatch"))
    gk.record_outcome(thread_id="t2", tool="navigate", outcome="ok", target_origin="https://a.example", call_id="c3")
    gk.apply_decision(thread_id="t1", approval_id="ap1", tool="click", target_origin="https://a.example",
                      kind="acceptForSession")
    store.close()
    return db


def test_each_decision_once_and_a_navigation_ends_where_it_went(tmp_path):
    home = tmp_path / "home"
    _seed(home)
    rows = [json.loads(line) for line in tabwarden("audit", "export", home=home).stdout.splitlines()]
    assert [(r["kind"], r["tool"], r.get("detail")) for r in rows] == [
        ("decision", "read_page", "initial"), ("outcome", "read_page", None), ("decision", "type", "initial"),
        ("decision", "click", "initial"), ("decision", "click", "dispatch"),
        ("decision", "navigate", "initial"), ("decision", "navigate", "dispatch"),
        ("outcome", "navigate", "the tab was at https://a.example"), ("approval", "click", None)]
    went = rows[7]
    assert went["target_origin"] == "https://b.example" and went["tool_outcome"] == "ok"
    assert rows[0]["words"] == "allowed: read_allowed (it only reads)"
    assert rows[8]["words"] == "your answer: acceptForSession (allowed for this task)"
    rule = rows[2]["rule"]["id"]
    assert rows[2]["words"] == f"denied: rule_deny (a permission rule denies it), rule {rule}: type @ https://a.example"
    assert rows[0]["thread_title"] == "Find flights" and "thread_title" not in went
    verified = tabwarden("audit", "verify", home=home)
    assert verified.returncode == 0 and "9 rows" in verified.stdout


def test_list_says_each_code_in_words_and_names_the_thread(tmp_path):
    home = tmp_path / "home"
    _seed(home)
    listed = tabwarden("audit", "list", home=home)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0].split() == ["seq", "time", "thread", "kind", "tool", "origin", "result"]
    assert lines[1].split("  ")[-1] == "user: acceptForSession (allowed for this task)"
    assert "t1 'Find flights'" in lines[1]
    assert "outcome: ok (done); the tab was at https://a.example" in lines[2] and "https://b.example" in lines[2]
    assert lines[-1].endswith("allow (read_allowed): it only reads") and "t1 'Find flights'" in lines[-1]
    assert "deny (rule_deny): a permission rule denies it, rule rule:" in lines[-3] and "type @ https://a.example" \
        in lines[-3]
    assert "acceptForSession" not in listed.stdout.replace("acceptForSession (allowed for this task)", "")
