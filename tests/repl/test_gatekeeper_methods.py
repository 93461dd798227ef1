"""The gatekeeper's control methods (what the REPL's rule, grant, explain and audit helpers call),
against a real Gatekeeper over a real store."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from host.control.server import ControlError
from host.gatekeeper import control_methods as gm
from host.gatekeeper.service import CheckRequest, Gatekeeper
from host.store import Store

SHOP = "https://shop.example.com"


@pytest.fixture
def gatekeeper(tmp_path, monkeypatch):
    monkeypatch.setenv("TABWARDEN_HOME", str(tmp_path / "home"))
    store = Store(tmp_path / "db.sqlite3")
    gk = Gatekeeper(store, user_policy=tmp_path / "user.json", managed_policy=tmp_path / "managed.json")
    gk.bind_browser_session("session-1")
    yield gk
    store.close()


@pytest.fixture
def conn(gatekeeper):
    services = SimpleNamespace(gatekeeper=gatekeeper, store=gatekeeper._store)
    return SimpleNamespace(server=SimpleNamespace(host=SimpleNamespace(services=services)))


async def audit_count(conn) -> int:
    return len(await gm.audit({"last": 1000}, conn))


async def failure(call) -> ControlError:
    with pytest.raises(ControlError) as caught:
        await call
    return caught.value


async def test_explain_answers_like_the_real_check_but_audits_nothing(gatekeeper, conn):
    gatekeeper.add_rule({"tool": "click", "origin": SHOP, "verdict": "deny"})
    before = await audit_count(conn)
    explained = await gm.explain({"tool": "click", "origin": SHOP + "/cart", "params": {"ref": "s1_1_1"},
                                  "thread_id": "t1"}, conn)
    assert await audit_count(conn) == before  # a question, not an attempt
    real = gatekeeper.check(CheckRequest(thread_id="t1", tool="click", origin=SHOP + "/cart", params={"ref": "s1_1_1"}))
    assert (explained["verdict"], explained["code"]) == (real.verdict, real.code) == ("deny", "rule_deny")
    assert explained["ruleText"] == f"click @ {SHOP} (user_setting)"
    assert any(step["step"] == "rule_deny" and step["outcome"] == "hit" for step in explained["trace"])
    assert await audit_count(conn) == before + 1  # the real check did audit


async def test_explain_sees_the_threads_grants_scope_lock_and_policy(gatekeeper, conn):
    ask = await gm.explain({"tool": "click", "origin": SHOP, "thread_id": "t1"}, conn)
    assert (ask["verdict"], ask["code"], ask["policy"]) == ("ask", "policy_default", "untrusted")
    gatekeeper.grants.grant("t1", "click", SHOP)
    assert (await gm.explain({"tool": "click", "origin": SHOP, "thread_id": "t1"}, conn))["code"] == "session_grant"
    assert (await gm.explain({"tool": "click", "origin": SHOP, "thread_id": "t2"}, conn))["code"] == "policy_default"
    gatekeeper.set_scope_lock("t1", ["https://docs.example.com"])
    locked = await gm.explain({"tool": "click", "origin": SHOP, "thread_id": "t1"}, conn)
    assert (locked["verdict"], locked["code"]) == ("deny", "scope_lock")
    await gm.set_policy({"thread_id": "t2", "policy": "auto"}, conn)
    assert (await gm.explain({"tool": "click", "origin": SHOP, "thread_id": "t2"}, conn))["verdict"] == "allow"


async def test_rules_are_listed_added_and_removed_with_their_provenance(conn):
    added = await gm.add_rule({"tool": "type", "origin": SHOP, "verdict": "ask", "args": {"text": "secret"}}, conn)
    assert added["source"] == "user_setting" and added["id"].startswith("rule:")
    listed = {v["rule"]["id"]: v for v in await gm.rules({}, conn)}
    assert listed[added["id"]]["provenance"] == "store" and listed[added["id"]]["removable"] is True
    assert await gm.remove_rule({"id": added["id"]}, conn) == {"removed": added["id"]}
    assert added["id"] not in {v["rule"]["id"] for v in await gm.rules({}, conn)}
    unknown = await failure(gm.remove_rule({"id": "rule:nope"}, conn))
    assert unknown.info.code == "unknown_rule" and unknown.info.details == {"path": "$.id"}


async def test_origin_lists_and_grants(gatekeeper, conn):
    assert await gm.add_origin({"pattern": "https://Bank.Example", "list": "blocked"}, conn) == \
        {"pattern": "https://bank.example", "list": "blocked"}
    assert (await gm.explain({"tool": "click", "origin": "https://bank.example/x"}, conn))["code"] == "sensitive_origin"
    await gm.remove_origin({"pattern": "https://bank.example", "list": "blocked"}, conn)
    assert (await failure(gm.add_origin({"pattern": "not a pattern ::", "list": "guarded"}, conn))).info.code == \
        "invalid_pattern"
    gatekeeper.grants.grant("t1", "click", SHOP)
    gatekeeper.grants.grant("t2", "type", SHOP)
    assert (await gm.grants({"thread_id": "t1"}, conn))["grants"] == {"t1": [{"tool": "click", "origin": SHOP}]}
    left = await gm.revoke_grants({"thread_id": "t1"}, conn)
    assert left["grants"] == {"t2": [{"tool": "type", "origin": SHOP}]} and left["browserSession"] == "session-1"
    assert (await gm.revoke_grants({}, conn))["grants"] == {}


async def test_audit_rows_newest_or_after_a_seq_and_the_chain_verifies(gatekeeper, conn):
    for tool in ("read_page", "click", "type"):
        gatekeeper.check(CheckRequest(thread_id="t1", tool=tool, origin=SHOP))
    newest = await gm.audit({"last": 2}, conn)
    assert [r["tool"] for r in newest] == ["click", "type"]  # the newest two, oldest first
    first = (await gm.audit({"last": 3}, conn))[0]["seq"]
    after = await gm.audit({"after": first}, conn)
    assert [r["tool"] for r in after] == ["click", "type"]
    assert (await gm.audit({"last": 10, "verdict": "allow"}, conn))[0]["tool"] == "read_page"
    assert isinstance(newest[0]["flags"], list)  # JSON columns come back decoded
    assert (await gm.verify_audit({}, conn))["ok"] is True


@pytest.mark.parametrize("method, params, code, text", [
    (gm.add_rule, {"tool": "click", "origin": SHOP, "verdict": "maybe"}, "invalid_message", "$.verdict"),
    (gm.add_rule, {"tool": "click", "origin": SHOP, "verdict": "allow", "source": "managed"}, "invalid_message",
     "unknown field `source`"),
    (gm.explain, {"tool": "frobnicate"}, "unknown_tool", "give its effects"),
    (gm.audit, {"last": 0}, "invalid_message", "$.last"),
    (gm.rules, {"all": True}, "invalid_message", "takes no parameters"),
    (gm.set_policy, {"thread_id": "t1", "policy": "yolo"}, "invalid_message", "$.policy"),
])
async def test_bad_input_gets_a_structured_error_and_changes_nothing(conn, method, params, code, text):
    before = await gm.rules({}, conn)
    error = await failure(method(params, conn))
    assert error.info.code == code and text in error.info.message
    assert await gm.rules({}, conn) == before


async def test_an_untrustworthy_gatekeeper_fails_closed_with_its_own_code(gatekeeper, conn):
    gatekeeper.mark_unavailable(RuntimeError("disk on fire"))
    for call in (gm.rules({}, conn), gm.explain({"tool": "click", "origin": SHOP}, conn),
                 gm.add_rule({"tool": "click", "origin": SHOP, "verdict": "allow"}, conn)):
        assert (await failure(call)).info.code == "gatekeeper_unavailable"
