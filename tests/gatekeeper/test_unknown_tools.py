"""A rule naming a tool that does not exist would never match: it is refused where rules are
added, left out (and reported) where a policy file is loaded, and reported when it was stored
before names were checked. The built-in rule is labelled as built in."""

from __future__ import annotations

import json

import msgspec
import pytest

from host.gatekeeper.errors import InvalidInput
from host.gatekeeper.rules import Rule, parse_rule
from host.gatekeeper.service import DEFAULT_RULE, CheckRequest
from host.gatekeeper.tool_names import closest_tool


@pytest.mark.parametrize("tool", ["click", "artifact_create", "mcp__github__issues", "mcp__github__*", "mcp*",
                                  "tab_*", "category:click", "*"])
def test_real_tools_and_patterns_are_accepted(tool):
    assert parse_rule({"tool": tool, "origin": "*", "verdict": "deny"}).verdict == "deny"


@pytest.mark.parametrize(("tool", "nearest"), [("clik", "click"), ("navgate", "navigate"), ("tpye*", None)])
def test_an_unknown_tool_is_refused_with_the_nearest_name(tool, nearest):
    with pytest.raises(InvalidInput) as caught:
        parse_rule({"tool": tool, "origin": "*", "verdict": "deny"}, path="$.rules[3]")
    assert caught.value.code == "unknown_tool" and caught.value.path == "$.rules[3].tool"
    assert repr(tool.rstrip("*")) in caught.value.message
    if nearest:
        assert f"did you mean {nearest!r}?" in caught.value.message


def test_closest_tool():
    assert closest_tool("screenshots") == "screenshot" and closest_tool("zzzzzz") is None


def test_add_rule_refuses_and_stores_nothing(store, make_gatekeeper):
    gk = make_gatekeeper(store)
    before = gk.list_rules()
    with pytest.raises(InvalidInput) as caught:
        gk.add_rule({"tool": "clik", "origin": "*", "verdict": "deny"})
    assert "did you mean 'click'?" in caught.value.message
    assert gk.list_rules() == before


def test_a_policy_file_keeps_its_valid_rules(store, make_gatekeeper):
    gk = make_gatekeeper(store, user=json.dumps({"rules": [
        {"tool": "hover", "origin": "*", "verdict": "deny"},
        {"tool": "clik", "origin": "*", "verdict": "deny"},
        {"tool": "type", "origin": "*", "verdict": "deny"}]}))
    assert gk.error is None and gk.load_errors == []
    tools = [v.rule.tool for v in gk.list_rules() if v.provenance.startswith("user:")]
    assert tools == ["hover", "type"]
    [warning] = gk.load_warnings
    assert warning.code == "unknown_tool" and warning.path == "$.rules[1].tool" and "'click'" in warning.message
    decision = gk.check(CheckRequest(thread_id="t", tool="type", params={"ref": "a", "text": "x"}, origin="https://a.example"))
    assert decision.code == "rule_deny"


def test_a_stored_rule_from_before_is_kept_visible_and_reported(store, make_gatekeeper):
    make_gatekeeper(store)  # creates the tables
    old = Rule(tool="clik", origin="*", verdict="deny", id="rule:old", created_at=1.0)
    store.execute("INSERT INTO gk_rules (id, body, created_at) VALUES (?, ?, ?)",
                  (old.id, msgspec.json.encode(old).decode(), old.created_at))
    gk = make_gatekeeper(store)
    assert gk.error is None
    assert "rule:old" in [v.rule.id for v in gk.list_rules()]  # the user can still delete it
    [warning] = gk.load_warnings
    assert "stored rule clik @ *" in warning.message and "did you mean 'click'?" in warning.message
    gk.remove_rule("rule:old")
    assert gk.load_warnings == []


def test_the_seeded_rule_is_labelled_built_in(store, make_gatekeeper):
    gk = make_gatekeeper(store)
    view = next(v for v in gk.list_rules() if v.rule.id == DEFAULT_RULE.id)
    assert view.provenance == "builtin" and view.removable
    decision = gk.check(CheckRequest(thread_id="t", tool="run_javascript", params={"code": "1"},
                                     origin="https://a.example"))
    assert decision.reason == ("denied by rule run_javascript @ * (built-in), id default:run_javascript-deny; to "
                               "change that, delete it in Settings → Permission rules, or run "
                               "tw.remove_rule('default:run_javascript-deny') at the REPL")
    added = gk.add_rule({"tool": "click", "origin": "*", "verdict": "deny"})
    assert added.describe() == "click @ * (user_setting)"


def test_doctor_names_the_rule_left_out(tmp_path):
    from host.cli.settings_checks import run
    from host.gatekeeper.policy_files import user_policy_path

    path = user_policy_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"rules": [{"tool": "clik", "verdict": "deny"}, {"tool": "hover", "verdict": "deny"}]}))
    check = next(c for c in run() if c.name == "policy (user)")
    assert not check.ok and "$.rules[0].tool" in check.detail and "did you mean 'click'?" in check.detail
    assert "other rules are in force" in check.detail
