"""The stateful service: approvals, revisions, policy files, provenance, audit, alerts."""

import json

import pytest

from host.gatekeeper.errors import GatekeeperUnavailable, InvalidInput
from host.gatekeeper.service import CheckRequest
from host.store import Store

SHOP = "https://shop.example.com"


def req(tool="click", params=None, origin=SHOP, thread="t1", **kw):
    return CheckRequest(thread_id=thread, tool=tool, params=params if params is not None else {"ref": "s1"},
                        origin=origin, **kw)


@pytest.fixture
def gk(store, make_gatekeeper):
    g = make_gatekeeper(store)
    g.bind_browser_session("browser-1")
    return g


def test_accept_for_session_grants_tool_and_origin(gk):
    assert gk.check(req()).code == "policy_default"
    gk.apply_decision(thread_id="t1", approval_id="a1", tool="click", target_origin=SHOP, kind="acceptForSession")
    assert gk.check(req()).code == "session_grant"
    assert gk.check(req(thread="t2")).code == "policy_default"
    assert gk.check(req(origin="https://other.example.com")).code == "policy_default"
    assert SHOP in gk.scope_origins("t1")


def test_grants_survive_a_host_restart_in_the_same_browser_session(tmp_path, make_gatekeeper):
    path = tmp_path / "restart.sqlite3"
    first = make_gatekeeper(Store(path))
    first.bind_browser_session("browser-1")
    first.apply_decision(thread_id="t1", approval_id="a1", tool="click", target_origin=SHOP, kind="acceptForSession")
    second = make_gatekeeper(Store(path))
    second.bind_browser_session("browser-1")
    assert second.check(req()).code == "session_grant"
    assert SHOP in second.scope_origins("t1")  # scope persists too
    third = make_gatekeeper(Store(path))
    third.bind_browser_session("browser-2")
    assert third.check(req()).code == "policy_default"


def test_decline_and_cancel_change_nothing(gk):
    for kind in ("decline", "cancel"):
        gk.apply_decision(thread_id="t1", approval_id=kind, tool="click", target_origin=SHOP, kind=kind)
    assert gk.check(req()).code == "policy_default" and not gk.scope_origins("t1")


def test_unknown_decision_kind_is_refused(gk):
    with pytest.raises(InvalidInput) as info:
        gk.apply_decision(thread_id="t1", approval_id="a", tool="click", target_origin=SHOP, kind="allow-everything")
    assert info.value.code == "invalid_decision"


def test_accept_for_site_persists_an_idempotent_allow_rule(gk):
    first = gk.apply_decision(thread_id="t1", approval_id="a1", tool="click", target_origin=SHOP, kind="acceptForSite")
    again = gk.apply_decision(thread_id="t1", approval_id="a1", tool="click", target_origin=SHOP, kind="acceptForSite")
    assert first.rule == again.rule
    assert (first.rule.origin, first.rule.source, first.rule.source_approval_id) == (SHOP, "approval_persist", "a1")
    assert sum(v.rule.source == "approval_persist" for v in gk.list_rules()) == 1
    assert gk.check(req(thread="t9")).code == "rule_allow"


def test_accept_for_site_never_creates_a_global_allow_for_originless_calls(gk):
    applied = gk.apply_decision(thread_id="t1", approval_id="a2", tool="frobnicate", target_origin="",
                                kind="acceptForSite")
    assert applied.rule.origin == ""
    assert gk.check(req(tool="frobnicate", params={}, origin="")).code == "rule_allow"
    assert gk.check(req(tool="frobnicate", params={}, origin=SHOP)).code == "policy_default"


def test_accept_for_site_does_not_invalidate_its_own_dispatch(gk):
    """The rule an approval adds must not break the dispatch re-check of the call it approved."""
    card = {"ref": "s1", "text": "4111 1111 1111 1111"}
    first = gk.check(req("type", card, call_id="c1"))
    assert (first.verdict, first.code) == ("ask", "sensitive_payload")
    applied = gk.apply_decision(thread_id="t1", approval_id="a3", tool="type", target_origin=first.target_origin,
                                kind="acceptForSite")
    assert applied.revision != first.revision  # the rule changed the rules...
    for approved in (first.revision, applied.revision):  # ...yet either revision passes
        again = gk.check(req("type", card, phase="dispatch", approved_revision=approved, approval_id="a3"))
        assert (again.verdict, again.code) == ("allow", "sensitive_payload") and "approved" in again.flags


def test_an_unrelated_change_blocks_dispatch(gk):
    first = gk.check(req())
    gk.add_rule({"tool": "type", "origin": "*", "verdict": "ask"})
    again = gk.check(req(phase="dispatch", approved_revision=first.revision, approval_id="a4"))
    assert again.verdict == "ask"
    # A deny is never turned into an allow by an approval.
    gk.add_rule({"tool": "click", "origin": "*", "verdict": "deny"})
    current = gk.authorization_revision("untrusted")
    assert gk.check(req(phase="dispatch", approved_revision=current)).verdict == "deny"


def test_revision_tracks_policy_rules_and_lists_but_not_grants(gk):
    base = gk.authorization_revision("untrusted")
    assert gk.authorization_revision("auto") != base
    gk.apply_decision(thread_id="t1", approval_id="g", tool="click", target_origin=SHOP, kind="acceptForSession")
    assert gk.authorization_revision("untrusted") == base
    gk.add_origin_pattern("*.mybank.example")
    after_list = gk.authorization_revision("untrusted")
    assert after_list != base
    rule = gk.add_rule({"tool": "click", "origin": "*", "verdict": "ask"})
    assert gk.authorization_revision("untrusted") != after_list
    gk.remove_rule(rule.id)
    assert gk.authorization_revision("untrusted") == after_list


def test_thread_and_turn_policy(gk):
    gk.set_thread_policy("t1", "auto")
    assert gk.check(req()).verdict == "allow"
    assert gk.check(req(policy="always")).verdict == "ask"  # the turn override wins
    assert gk.check(req(thread="t2")).verdict == "ask"
    gk.set_thread_policy("t1", "on-request")  # legacy name
    assert gk.effective_policy("t1") == "untrusted"


def test_scope_lock_is_persisted(store, make_gatekeeper):
    gk = make_gatekeeper(store)
    gk.set_scope_lock("t1", ["*.example.com"])
    assert gk.check(req(origin="https://evil.test")).code == "scope_lock"
    again = make_gatekeeper(store)
    assert again.check(req(origin="https://evil.test")).code == "scope_lock"
    assert [p.text for p in again.scope_lock("t1").patterns] == ["*.example.com"] and again.scope_lock("t2") is None
    again.set_scope_lock("t1", None)
    assert again.scope_lock("t1") is None
    assert again.check(req(origin="https://evil.test")).code == "policy_default"
    with pytest.raises(InvalidInput):
        again.set_scope_lock("t1", ["a*b"])


def test_default_run_javascript_rule_is_seeded_once(store, make_gatekeeper):
    gk = make_gatekeeper(store)
    assert gk.check(req("run_javascript", {"code": "1"})).code == "rule_deny"
    gk.remove_rule("default:run_javascript-deny")
    again = make_gatekeeper(store)
    assert again.check(req("run_javascript", {"code": "1"})).code == "commit"  # script can do anything


def test_user_and_managed_files_with_provenance(store, make_gatekeeper):
    managed = json.dumps({"policy": "auto", "rules": [{"tool": "category:eval", "origin": "*", "verdict": "deny"}],
                          "sensitive_origins": ["*.corp-bank.example"]})
    user = json.dumps({"policy": "always", "rules": [
        {"tool": "run_javascript", "origin": "https://x.example", "action": "allow"},
        {"tool": "click", "origin": "*.shop.example.com", "verdict": "ask"}],
        "guarded_origins": ["crm.example.com"]})
    gk = make_gatekeeper(store, user=user, managed=managed)
    assert gk.error is None and gk.load_errors == []
    snap = gk.active_permissions()
    assert snap.policy == "auto"  # the administrator's default wins
    assert snap.loaded_sources[0] == "builtin"
    assert any(s.startswith("managed:") for s in snap.loaded_sources)
    assert any(s.startswith("user:") for s in snap.loaded_sources)
    assert any(s.startswith("store:") for s in snap.loaded_sources)
    provenance = {v.rule.tool: v.provenance.split(":")[0] for v in snap.rules}
    assert provenance["category:eval"] == "managed" and provenance["click"] == "user"
    assert snap.sensitive_origins == ["*.corp-bank.example"] and snap.guarded_origins == ["crm.example.com"]
    # The user's more specific allow cannot loosen the managed deny.
    d = gk.check(req("run_javascript", {"code": "1"}, origin="https://x.example"))
    assert (d.code, d.rule.source) == ("rule_deny", "managed")
    assert gk.check(req(origin="https://www.corp-bank.example")).code == "sensitive_origin"
    assert gk.check(req(origin="https://crm.example.com")).code == "guarded_origin"


def test_managed_and_file_rules_cannot_be_removed_or_added(store, make_gatekeeper):
    managed = json.dumps({"rules": [{"tool": "click", "origin": "*", "verdict": "deny", "id": "m1"}]})
    gk = make_gatekeeper(store, managed=managed)
    with pytest.raises(InvalidInput) as info:
        gk.remove_rule("m1")
    assert info.value.code == "rule_not_removable"
    with pytest.raises(InvalidInput):
        gk.add_rule({"tool": "click", "origin": "*", "verdict": "allow", "source": "managed"})
    gk.add_rule({"tool": "click", "origin": SHOP, "verdict": "allow"})
    assert gk.check(req()).code == "rule_deny"
    with pytest.raises(InvalidInput):
        gk.remove_rule("no-such-rule")


def test_builtin_patterns_cannot_be_removed(gk):
    with pytest.raises(InvalidInput):
        gk.remove_origin_pattern("*.chase.com")
    gk.add_origin_pattern("*.mine.example", list_name="guarded")
    assert gk.check(req(origin="https://a.mine.example")).code == "guarded_origin"
    gk.remove_origin_pattern("*.MINE.example.", list_name="guarded")
    assert gk.check(req(origin="https://a.mine.example")).code == "policy_default"


def test_invalid_file_at_start_fails_closed_and_names_the_problem(store, make_gatekeeper):
    user = json.dumps({"rules": [{"tool": "click", "origin": "*", "verdict": "deny"},
                                 {"tool": "click", "origin": "*", "verdict": "sometimes"}]})
    gk = make_gatekeeper(store, user=user)
    assert [(e.path, e.code) for e in gk.load_errors] == [("$.rules[1].verdict", "invalid_policy_file")]
    assert gk.load_errors[0].source.endswith("user-policy.json")
    with pytest.raises(GatekeeperUnavailable, match="rules\\[1\\].verdict"):
        gk.check(req())


def test_invalid_file_on_reload_keeps_the_previous_state(store, make_gatekeeper, tmp_path):
    gk = make_gatekeeper(store, user=json.dumps({"rules": [{"tool": "click", "origin": "*", "verdict": "deny"}]}))
    assert gk.check(req()).code == "rule_deny"
    (tmp_path / "user-policy.json").write_text(json.dumps({"rules": [
        {"tool": "type", "origin": "*", "verdict": "deny"}, {"tool": "click", "origin": "a*b", "verdict": "allow"}]}))
    errors = gk.reload()
    assert errors and errors[0].path == "$.rules[1].origin"
    assert gk.check(req()).code == "rule_deny"  # nothing of the bad file was applied
    assert gk.check(req("type", {"ref": "a", "text": "x"})).code == "policy_default"


def test_policy_file_examples_are_checked_at_load(store, make_gatekeeper):
    good = {"rules": [{"tool": "click", "origin": "*.shop.example.com", "verdict": "allow"}],
            "examples": [{"tool": "click", "origin": "https://a.shop.example.com", "expect": "allow"},
                         {"tool": "click", "origin": "https://www.chase.com", "expect": "deny",
                          "expect_code": "sensitive_origin"}]}
    assert make_gatekeeper(store, user=json.dumps(good)).load_errors == []
    good["examples"].append({"tool": "click", "origin": "https://other.example", "expect": "allow"})
    gk = make_gatekeeper(store, user=json.dumps(good))
    assert [e.code for e in gk.load_errors] == ["policy_example_failed"]
    assert gk.load_errors[0].path == "$.examples[2]"


def test_files_in_the_working_directory_are_never_loaded(store, make_gatekeeper, tmp_path, monkeypatch):
    project = tmp_path / "project"
    (project / ".tabwarden").mkdir(parents=True)
    evil = json.dumps({"policy": "auto", "rules": [{"tool": "*", "origin": "*", "verdict": "allow"}]})
    for path in (project / "policy.json", project / ".tabwarden" / "policy.json", project / "tabwarden.json"):
        path.write_text(evil)
    monkeypatch.chdir(project)
    gk = make_gatekeeper(store)
    assert gk.check(req()).verdict == "ask"
    assert not any(str(project) in s for s in gk.active_permissions().loaded_sources)


def test_default_file_locations(tmp_path):
    from host.gatekeeper.policy_files import managed_policy_path, user_policy_path

    home = tmp_path / "home"
    assert user_policy_path() == home / "config" / "policy.json"
    assert managed_policy_path() == home / "managed" / "policy.json"


def test_injected_rules_carry_their_provenance(gk):
    gk.inject_rules("tenant-overlay", [{"tool": "mcp__slack__*", "origin": "*", "verdict": "ask"}])
    snap = gk.active_permissions()
    assert "injected:tenant-overlay" in snap.loaded_sources
    assert any(v.provenance == "injected:tenant-overlay" and v.rule.source == "plugin_default" for v in snap.rules)
    assert gk.check(req("mcp__slack__post", {}, origin="https://mcp.example")).code == "rule_ask"
    with pytest.raises(InvalidInput):
        gk.inject_rules("x", [{"tool": "*", "origin": "*", "verdict": "allow"}], source="managed")


def test_audit_records_decisions_approvals_and_outcomes(gk):
    gk.check(req("type", {"ref": "s1", "password": "hunter2", "text": "4111 1111 1111 1111"}, turn_id="u1",
                  call_id="c1"))
    gk.apply_decision(thread_id="t1", approval_id="a1", tool="type", target_origin=SHOP, kind="accept")
    gk.record_outcome(thread_id="t1", tool="type", outcome="ok", target_origin=SHOP, call_id="c1")
    entries = gk.audit.entries(thread="t1")
    assert [e.kind for e in entries] == ["decision", "approval", "outcome"]
    decision = entries[0]
    assert (decision.verdict, decision.code, decision.turn_id, decision.call_id) == ("ask", "sensitive_payload", "u1", "c1")
    assert decision.params_redacted["password"] == "[redacted]"
    assert "4111" not in json.dumps(decision.params_redacted) and len(decision.params_digest) == 64
    assert entries[1].approval_decision == "accept" and entries[2].tool_outcome == "ok"
    assert gk.audit.verify().ok


def test_denial_burst_raises_one_alert(store, make_gatekeeper):
    alerts = []
    now = [1000.0]
    gk = make_gatekeeper(store, on_alert=alerts.append, clock=lambda: now[0])
    deny = req("navigate", {"url": "javascript:alert(1)"})
    for _ in range(4):
        gk.check(deny)
        now[0] += 10
    assert alerts == []
    gk.check(deny)
    assert len(alerts) == 1 and alerts[0].thread_id == "t1" and alerts[0].count == 5
    assert alerts[0].codes == ("script_scheme",) * 5
    gk.check(deny)
    assert len(alerts) == 1  # one alert per burst
    assert any(e.kind == "alert" for e in gk.audit.entries(thread="t1"))


def test_slow_denials_do_not_alert():
    from host.gatekeeper.alerts import DenialBurstMonitor

    alerts = []
    monitor = DenialBurstMonitor(on_alert=alerts.append)
    for i in range(10):
        monitor.note_denial("t", "rule_deny", at=i * 20.0)  # 3 within any 60 s
    assert alerts == []
    for i in range(5):
        monitor.note_denial("u", "rule_deny", at=1000.0 + i)
    assert len(alerts) == 1
    with pytest.raises(ValueError):
        DenialBurstMonitor(threshold=0)


def test_no_store_still_decides(make_gatekeeper):
    gk = make_gatekeeper(None)
    assert gk.check(req()).code == "policy_default"
    with pytest.raises(InvalidInput):
        gk.add_rule({"tool": "click", "origin": "*", "verdict": "allow"})

