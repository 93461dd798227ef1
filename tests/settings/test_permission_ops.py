"""Rules, origin lists, the default policy and a thread's scope lock, changed from the settings
page: every change goes through the gatekeeper (so it changes the next decision), bad input is
refused with the gatekeeper's code and changes nothing, what a policy file or the build fixes
cannot be removed, and a resent op does not act twice."""

from __future__ import annotations

import json

from host.ui import ops_settings
from host.engine.views import to_wire
from host.gatekeeper.service import CheckRequest

SHOP = "https://shop.example"


def rule(state, tool, origin):
    return next((r for r in state["rules"] if r["tool"] == tool and r["origin"] == origin), None)


def check(settings, tool="click", origin=SHOP, thread="t-1", **params):
    return settings.gatekeeper.check(CheckRequest(thread_id=thread, tool=tool, params=params, origin=origin))


async def test_the_state_shows_rules_lists_tools_and_the_default_policy(settings):
    state = await settings.state()
    assert state["defaultPolicy"] == "untrusted" and "policyLockedBy" not in state
    seeded = rule(state, "run_javascript", "*")
    assert seeded["verdict"] == "deny" and seeded["removable"] is True and seeded["provenance"] == "builtin"
    blocked = {e["pattern"]: e for e in state["blocked"]}
    assert blocked["*.paypal.com"] == {"pattern": "*.paypal.com", "origin": "builtin", "removable": False}
    assert any(e["pattern"] == "mail.google.com" and not e["removable"] for e in state["guarded"])
    assert {"name": "click", "label": "Click", "level": "L1", "effects": "write", "category": "click"} in state["tools"]
    assert "problems" not in state  # nothing failed to load


async def test_an_added_rule_changes_the_next_decision_and_every_page_hears_of_it(settings):
    assert check(settings).verdict == "ask"
    answer = await settings.op({"type": "rules.add", "tool": "click", "origin": SHOP, "verdict": "allow"})
    assert answer["type"] == "command.ack"
    decision = check(settings)
    assert decision.verdict == "allow" and decision.code == "rule_allow"
    broadcast = settings.recorder.of("settings.state")[-1]["state"]
    added = rule(broadcast, "click", SHOP)
    assert added["source"] == "user_setting" and added["removable"] is True
    removed = await settings.op({"type": "rules.remove", "ruleId": added["id"]})
    assert removed["type"] == "command.ack"
    assert check(settings).verdict == "ask"
    assert rule(await settings.state(), "click", SHOP) is None


async def test_a_resent_rule_is_added_once(settings):
    op = {"type": "rules.add", "tool": "category:fill", "origin": "*", "verdict": "ask"}
    first = await settings.op(op, submission="add-1")
    again = await settings.op(op, submission="add-1")
    assert first["type"] == again["type"] == "command.ack" and again["replayed"] is True
    # The answer was lost before its receipt was stored: running the op again finds its rule.
    from msgspec import convert

    from protocol import ui

    parsed = convert({**op, "submissionId": "add-1"}, ui.RulesAdd)
    rerun = ops_settings.rules_add(settings.commands.context, settings.client, parsed, "other-mark")
    assert to_wire(rerun)["type"] == "command.ack"
    state = await settings.state()
    assert [r["tool"] for r in state["rules"]].count("category:fill") == 1


async def test_a_bad_rule_is_refused_with_the_path_and_changes_nothing(settings):
    before = await settings.state()
    answer = await settings.op({"type": "rules.add", "tool": "click", "origin": "https://exa mple.com",
                                "verdict": "allow"})
    assert answer["type"] == "command.rejected" and answer["code"] in ("invalid_rule", "invalid_pattern")
    assert "$.origin" in answer["message"]
    assert (await settings.state())["rules"] == before["rules"]
    malformed = await settings.op({"type": "rules.add", "tool": "click", "origin": "*", "verdict": "maybe"})
    assert malformed["code"] == "invalid_command" and "$.verdict" in malformed["message"]


async def test_managed_rules_are_locked(settings):
    settings.write_managed({"rules": [{"tool": "download", "origin": "*", "verdict": "deny", "id": "corp-download"}]})
    managed = rule(await settings.state(), "download", "*")
    assert managed["source"] == "managed" and managed["removable"] is False
    assert managed["provenance"].startswith("managed:")
    answer = await settings.op({"type": "rules.remove", "ruleId": managed["id"]})
    assert answer["type"] == "command.rejected" and answer["code"] == "rule_not_removable"
    assert rule(await settings.state(), "download", "*") is not None
    unknown = await settings.op({"type": "rules.remove", "ruleId": "no-such-rule"})
    assert unknown["code"] == "unknown_rule"


async def test_the_default_policy_is_written_to_the_user_file_and_used(settings):
    answer = await settings.op({"type": "policy.setDefault", "policy": "auto"})
    assert answer["type"] == "command.ack"
    assert json.loads((settings.config / "policy.json").read_text())["policy"] == "auto"
    assert check(settings).verdict == "allow" and check(settings).code == "policy_default"
    assert (await settings.state())["defaultPolicy"] == "auto"


async def test_the_default_policy_keeps_the_rest_of_the_user_file(settings):
    settings.config.mkdir(parents=True, exist_ok=True)
    (settings.config / "policy.json").write_text(json.dumps(
        {"version": 1, "rules": [{"tool": "hover", "origin": "*", "verdict": "deny"}]}))
    assert settings.gatekeeper.reload() == []
    await settings.op({"type": "policy.setDefault", "policy": "always"})
    written = json.loads((settings.config / "policy.json").read_text())
    assert written["policy"] == "always" and written["rules"][0]["tool"] == "hover"


async def test_an_unreadable_user_file_is_left_alone(settings):
    settings.config.mkdir(parents=True, exist_ok=True)
    (settings.config / "policy.json").write_text("{not json")
    answer = await settings.op({"type": "policy.setDefault", "policy": "auto"})
    assert answer["type"] == "command.rejected" and answer["code"] == "invalid_policy"
    assert (settings.config / "policy.json").read_text() == "{not json"


async def test_the_administrators_default_policy_cannot_be_changed_here(settings):
    settings.write_managed({"policy": "always"})
    state = await settings.state()
    assert state["defaultPolicy"] == "always" and state["policyLockedBy"].startswith("managed:")
    answer = await settings.op({"type": "policy.setDefault", "policy": "auto"})
    assert answer["code"] == "policy_locked"
    assert not (settings.config / "policy.json").exists()


async def test_user_origins_are_editable_and_built_ins_are_not(settings):
    added = await settings.op({"type": "origins.add", "list": "blocked", "pattern": "*.mybank.example"})
    assert added["type"] == "command.ack"
    entry = next(e for e in (await settings.state())["blocked"] if e["pattern"] == "*.mybank.example")
    assert entry == {"pattern": "*.mybank.example", "origin": "user", "removable": True}
    denied = check(settings, origin="https://www.mybank.example")
    assert denied.verdict == "deny" and denied.code == "sensitive_origin"
    builtin = await settings.op({"type": "origins.remove", "list": "blocked", "pattern": "*.paypal.com"})
    assert builtin["code"] == "pattern_not_removable"
    absent = await settings.op({"type": "origins.remove", "list": "guarded", "pattern": "crm.example"})
    assert absent["code"] == "unknown_pattern"
    removed = await settings.op({"type": "origins.remove", "list": "blocked", "pattern": "*.mybank.example"})
    assert removed["type"] == "command.ack"
    assert check(settings, origin="https://www.mybank.example").verdict == "ask"
    bad = await settings.op({"type": "origins.add", "list": "guarded", "pattern": "https://"})
    assert bad["code"] == "invalid_pattern"


async def test_policy_file_origins_are_shown_locked(settings):
    settings.write_managed({"guarded_origins": ["crm.corp.example"]})
    entry = next(e for e in (await settings.state())["guarded"] if e["pattern"] == "crm.corp.example")
    assert entry["origin"] == "file" and entry["removable"] is False
    answer = await settings.op({"type": "origins.remove", "list": "guarded", "pattern": "crm.corp.example"})
    assert answer["code"] == "pattern_not_removable"


async def test_a_threads_scope_lock_is_set_shown_and_lifted(settings):
    created = await settings.op({"type": "thread.create", "title": "Shop"})
    thread = created["threadId"]
    answer = await settings.op({"type": "scope.setLock", "threadId": thread, "patterns": ["*.shop.example"]})
    assert answer["type"] == "command.ack" and answer["threadId"] == thread
    scope = (await settings.state(thread))["thread"]
    assert scope["lock"] == ["*.shop.example"] and scope["policy"] == "untrusted"
    outside = check(settings, origin="https://elsewhere.example", thread=thread)
    assert outside.verdict == "deny" and outside.code == "scope_lock"
    await settings.op({"type": "scope.setLock", "threadId": thread, "patterns": None})
    assert "lock" not in (await settings.state(thread))["thread"]
    missing = await settings.op({"type": "scope.setLock", "threadId": "nope", "patterns": ["*"]})
    assert missing["code"] == "thread_not_found"


async def test_an_unavailable_gatekeeper_refuses_changes_without_storing_the_refusal(settings):
    settings.gatekeeper.mark_unavailable(RuntimeError("disk gone"))
    state = await settings.state()
    assert any("disk gone" in p for p in state["problems"])
    op = {"type": "rules.add", "tool": "click", "origin": "*", "verdict": "allow"}
    first = await settings.op(op, submission="while-down")
    assert first["code"] == "gatekeeper_unavailable"
    assert settings.engine.store.receipt(settings.client.key, "while-down") is None


async def test_a_rule_for_a_tool_that_does_not_exist_is_refused_with_the_nearest_name(settings):
    before = await settings.state()
    answer = await settings.op({"type": "rules.add", "tool": "clik", "origin": "*", "verdict": "deny"})
    assert answer["type"] == "command.rejected" and answer["code"] == "unknown_tool"
    assert "did you mean 'click'?" in answer["message"] and "$.tool" in answer["message"]
    assert (await settings.state())["rules"] == before["rules"]
