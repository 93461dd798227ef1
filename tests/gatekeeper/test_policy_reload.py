"""A policy file edited by hand is noticed without restarting the host: a fixed file makes the
gatekeeper available again, a broken edit leaves the previous rules in force."""

from __future__ import annotations

import json
import os

import pytest

from host.gatekeeper.errors import GatekeeperUnavailable
from host.gatekeeper.service import CheckRequest

CLICK = CheckRequest(thread_id="t", tool="click", params={"ref": "a"}, origin="https://a.example")


def _write(path, document) -> None:
    text = document if isinstance(document, str) else json.dumps(document)
    path.write_text(text)
    st = path.stat()  # a distinct modification time even on coarse file systems
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def test_a_file_fixed_after_start_up_is_picked_up(store, make_gatekeeper, tmp_path):
    gk = make_gatekeeper(store, user='{"rules": [{"tool": "click", "verdict": "maybe"}]}', reload_interval_s=0)
    with pytest.raises(GatekeeperUnavailable):
        gk.check(CLICK)  # fail closed while the file is invalid
    _write(tmp_path / "user-policy.json", {"rules": [{"tool": "click", "origin": "*", "verdict": "allow"}]})
    assert gk.check(CLICK).code == "rule_allow"


def test_an_edit_applies_and_a_broken_edit_keeps_the_previous_rules(store, make_gatekeeper, tmp_path):
    gk = make_gatekeeper(store, user=json.dumps({"rules": []}), reload_interval_s=0)
    seen = []
    gk.on_change(lambda: seen.append(gk.changes))
    assert gk.check(CLICK).code == "policy_default"
    _write(tmp_path / "user-policy.json", {"rules": [{"tool": "click", "origin": "*", "verdict": "deny"}]})
    assert gk.check(CLICK).code == "rule_deny" and seen  # the navigation guard hears of it
    _write(tmp_path / "user-policy.json", '{"rules": [')
    assert gk.check(CLICK).code == "rule_deny" and gk.load_errors
    gk.check(CLICK)
    assert len(seen) == 1  # an unchanged file is not read again


def test_files_are_looked_at_once_per_interval(store, make_gatekeeper, tmp_path):
    gk = make_gatekeeper(store, user=json.dumps({"rules": []}), reload_interval_s=3600)
    _write(tmp_path / "user-policy.json", {"rules": [{"tool": "click", "origin": "*", "verdict": "deny"}]})
    assert gk.check(CLICK).code == "policy_default"
    gk.reload()
    assert gk.check(CLICK).code == "rule_deny"


def test_a_lock_holds_page_requests_unless_a_file_keeps_it_to_navigations(store, make_gatekeeper, tmp_path):
    gk = make_gatekeeper(store, user=json.dumps({"rules": []}), reload_interval_s=0)
    gk.set_scope_lock("t", ["https://a.example"])
    assert gk.reach("t").confine_page
    _write(tmp_path / "user-policy.json", {"lock_holds_page_requests": False})
    assert not gk.reach("t").confine_page
    _write(tmp_path / "user-policy.json", {"lock_holds_page_requests": "no"})
    assert not gk.reach("t").confine_page and gk.load_errors  # the previous file stays in force
    assert "lock_holds_page_requests" in str(gk.load_errors[0].path)


def test_the_administrators_word_on_the_lock_wins(store, make_gatekeeper):
    gk = make_gatekeeper(store, user=json.dumps({"lock_holds_page_requests": False}),
                         managed=json.dumps({"lock_holds_page_requests": True}))
    gk.set_scope_lock("t", ["https://a.example"])
    assert gk.reach("t").confine_page
