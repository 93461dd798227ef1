""""Test a call" answers with the gatekeeper's own decision and steps for a tool and a URL (the
live rules, lists and a thread's scope), without auditing it; the audit view reads recent
decisions with filters, newest last, parameters already redacted."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from host.gatekeeper.service import CheckRequest


async def explain(settings, tool, url, **extra):
    answer = await settings.op({"type": "policy.explain", "tool": tool, "url": url, **extra})
    assert answer["type"] == "policy.explained", answer
    return answer


async def test_explain_follows_the_live_rules_and_lists(settings):
    asked = await explain(settings, "click", "https://shop.example/cart")
    assert (asked["verdict"], asked["code"], asked["targetOrigin"]) == ("ask", "policy_default", "https://shop.example")
    assert [s["step"] for s in asked["trace"]][:4] == ["always_allowed", "destination", "sensitive_origin", "read"]
    await settings.op({"type": "rules.add", "tool": "click", "origin": "*.shop.example", "verdict": "allow"})
    allowed = await explain(settings, "click", "https://shop.example/cart")
    assert allowed["verdict"] == "allow" and allowed["code"] == "rule_allow"
    assert allowed["rule"] == "click @ *.shop.example (user_setting)"
    blocked = await explain(settings, "type", "https://www.paypal.com/")
    assert blocked["verdict"] == "deny" and blocked["code"] == "sensitive_origin"


async def test_explain_judges_url_tools_by_their_destination_and_flags_payloads(settings):
    script = await explain(settings, "navigate", "javascript:alert(1)")
    assert script["verdict"] == "deny" and script["code"] == "script_scheme"
    card = await explain(settings, "type", "https://shop.example", params={"text": "4111 1111 1111 1111"},
                         policy="auto")
    assert card["verdict"] == "ask" and "sensitive_payload" in card["flags"] and "card_number" in card["findings"]
    assert card["policy"] == "auto"
    read = await explain(settings, "read_page", "https://shop.example")
    assert read["verdict"] == "allow" and read["code"] == "read_allowed"
    # The blocked list is no access: reading a blocked site is refused too.
    read = await explain(settings, "read_page", "https://www.paypal.com")
    assert read["verdict"] == "deny" and read["code"] == "sensitive_origin"
    unknown = await settings.op({"type": "policy.explain", "tool": "teleport", "url": "https://a.example"})
    assert unknown["type"] == "command.rejected" and unknown["code"] == "unknown_tool"


async def test_explain_uses_a_threads_scope_lock_and_is_not_audited(settings):
    thread = (await settings.op({"type": "thread.create"}))["threadId"]
    await settings.op({"type": "scope.setLock", "threadId": thread, "patterns": ["https://shop.example"]})
    outside = await explain(settings, "click", "https://other.example", threadId=thread)
    assert outside["verdict"] == "deny" and outside["code"] == "scope_lock"
    rows = await settings.op({"type": "audit.query"})
    assert rows["type"] == "audit.rows" and rows.get("rows", []) == []


async def test_the_audit_view_filters_and_shows_the_newest_rows_last(settings):
    gatekeeper = settings.gatekeeper
    for n, origin in enumerate(("https://a.example", "https://b.example", "https://www.paypal.com")):
        gatekeeper.check(CheckRequest(thread_id="t-1", tool="type", params={"text": f"x{n}", "password": "hunter2"},
                                      origin=origin))
    gatekeeper.check(CheckRequest(thread_id="t-2", tool="read_page", origin="https://a.example"))
    everything = (await settings.op({"type": "audit.query"}))["rows"]
    assert [r["targetOrigin"] for r in everything] == ["https://a.example", "https://b.example",
                                                       "https://www.paypal.com", "https://a.example"]
    assert everything[0]["paramsRedacted"]["password"] == "[redacted]"
    denied = (await settings.op({"type": "audit.query", "verdict": "deny"}))["rows"]
    assert [(r["tool"], r["code"]) for r in denied] == [("type", "sensitive_origin")]
    newest = (await settings.op({"type": "audit.query", "threadId": "t-1", "limit": 2}))["rows"]
    assert [r["targetOrigin"] for r in newest] == ["https://b.example", "https://www.paypal.com"]
    reads = (await settings.op({"type": "audit.query", "tool": "read_page", "kind": "decision"}))["rows"]
    assert len(reads) == 1 and reads[0]["threadId"] == "t-2"


async def test_explain_answers_like_tabwarden_policy_check_on_the_installed_policy(settings, tmp_path):
    await settings.op({"type": "rules.add", "tool": "click", "origin": "*.shop.example", "verdict": "allow"})
    await settings.op({"type": "rules.add", "tool": "category:fill", "origin": "*", "verdict": "ask"})
    await settings.op({"type": "origins.add", "list": "guarded", "pattern": "crm.example"})
    await settings.op({"type": "policy.setDefault", "policy": "auto"})
    cases = [("click", "https://a.shop.example", {}), ("type", "https://a.shop.example", {"text": "hi"}),
             ("click", "https://crm.example", {}), ("navigate", "https://www.paypal.com/x", {}),
             ("hover", "https://other.example", {}), ("run_javascript", "https://a.shop.example", {"code": "1"})]
    lines = []
    for tool, url, params in cases:
        origin = "" if tool == "navigate" else url
        case_params = {**params, "url": url} if tool == "navigate" else params
        lines.append(json.dumps({"tool": tool, "origin": origin, "params": case_params}))
    (tmp_path / "cases.jsonl").write_text("\n".join(lines) + "\n")
    cli = subprocess.run([sys.executable, "-m", "host", "policy", "check", "--installed", "--cases",
                          str(tmp_path / "cases.jsonl")], capture_output=True, text=True, timeout=60, env=os.environ)
    answers = [json.loads(line) for line in cli.stdout.splitlines()]
    assert len(answers) == len(cases), cli.stderr
    for (tool, url, params), expected in zip(cases, answers):
        got = await explain(settings, tool, url, params=params)
        assert (got["verdict"], got["code"], got.get("flags", []), got["targetOrigin"], got["reason"]) == (
            expected["verdict"], expected["code"], expected["flags"], expected["target_origin"], expected["reason"])
    assert {a["verdict"] for a in answers} == {"allow", "ask", "deny"}  # the cases cover every verdict
