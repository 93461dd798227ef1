""""Test a call" answers with the gatekeeper's own decision and steps for a tool and a URL (the
live rules, lists and a thread's scope), without auditing it; the audit view reads recent
decisions with filters, newest last, parameters already redacted."""

from __future__ import annotations

from host.gatekeeper.service import CheckRequest


async def explain(settings, tool, url, **extra):
    answer = await settings.op({"type": "policy.explain", "tool": tool, "url": url, **extra})
    assert answer["type"] == "policy.explained", answer
    return answer


async def test_explain_follows_the_live_rules_and_lists(settings):
    asked = await explain(settings, "click", "https://shop.example/cart")
    assert (asked["verdict"], asked["code"], asked["targetOrigin"]) == ("ask", "policy_default", "https://shop.example")
    assert [s["step"] for s in asked["trace"]][:2] == ["always_allowed", "read"]
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
    read = await explain(settings, "read_page", "https://www.paypal.com")
    assert read["verdict"] == "allow" and read["code"] == "read_allowed"
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
