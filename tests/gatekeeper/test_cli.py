"""`tabwarden policy ...` and `tabwarden audit ...` run as real subprocesses."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def tabwarden(*args, stdin: str = "", home: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "TABWARDEN_HOME": str(home), "XDG_RUNTIME_DIR": str(home / "run")}
    return subprocess.run([sys.executable, "-m", "host", *args], input=stdin, capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=60)


def lines(*cases) -> str:
    return "".join((c if isinstance(c, str) else json.dumps(c)) + "\n" for c in cases)


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


def test_check_answers_every_line_in_order(home):
    stdin = lines(
        {"tool": "click", "effects": "write", "level": "L1", "params": {"ref": "s1"},
         "origin": "https://shop.example.com", "policy": "untrusted",
         "rules": [{"tool": "click", "origin": "*", "verdict": "deny", "source": "user_setting"}],
         "sensitive_origins": [], "guarded_origins": [], "scope_lock": None,
         "grants": [["click", "https://shop.example.com"]], "scope_origins": ["https://shop.example.com"],
         "target": {"input_type": "password"}},
        "{not json",
        {"tool": "navigate", "params": {"url": "view-source:https://www.chase.com"}, "policy": "auto"},
        "",
        {"tool": "read_page", "origin": "https://www.chase.com"},
        {"tool": "mystery"},
        {"tool": "click", "rules": [{"tool": "click", "origin": "*", "verdict": "maybe"}]},
        {"tool": "type", "params": {"ref": "a", "text": "hi"}, "origin": "https://a.example",
         "grants": [["type", "HTTPS://A.EXAMPLE:443"]]},
        {"tool": "click", "origin": "https://evil.test", "scope_lock": ["*.example.com"], "policy": "auto"},
        {"tool": "click", "sensitive_origins": ["a*b"]},
        [1, 2],
    )
    result = tabwarden("policy", "check", stdin=stdin, home=home)
    out = [json.loads(line) for line in result.stdout.splitlines()]
    assert result.returncode == 1  # some lines were malformed
    assert len(out) == 10  # the blank line is skipped, nothing else
    first = out[0]
    # A write also says what it commits (its effect class and the facts that decided it).
    assert set(first) == {"verdict", "code", "flags", "target_origin", "rule", "reason", "effect", "effect_facts"}
    assert first["effect"] == "step" and first["effect_facts"]
    assert (first["verdict"], first["code"], first["target_origin"]) == ("deny", "rule_deny", "https://shop.example.com")
    assert first["rule"]["tool"] == "click" and first["rule"]["source"] == "user_setting"
    assert out[1]["error"]["code"] == "invalid_json" and out[1]["error"]["line"] == 2
    assert (out[2]["verdict"], out[2]["code"], out[2]["target_origin"]) == ("deny", "sensitive_origin", "https://www.chase.com")
    # The blocked list is no access: a read there is denied too.
    assert (out[3]["verdict"], out[3]["code"], out[3]["target_origin"]) == ("deny", "sensitive_origin",
                                                                              "https://www.chase.com")
    assert out[4]["error"] == {"code": "unknown_tool", "message": out[4]["error"]["message"], "line": 6,
                               "path": "$.effects"}
    assert out[5]["error"]["code"] == "invalid_rule" and out[5]["error"]["path"] == "$.rules[0].verdict"
    assert "expected one of allow, ask, deny" in out[5]["error"]["message"]
    assert (out[6]["verdict"], out[6]["code"]) == ("allow", "session_grant")
    assert (out[7]["verdict"], out[7]["code"]) == ("deny", "scope_lock")
    assert out[8]["error"]["code"] == "invalid_pattern" and out[8]["error"]["path"] == "$.sensitive_origins[0]"
    assert out[9]["error"]["code"] == "invalid_case" and out[9]["error"]["line"] == 11


def test_check_reads_a_cases_file_and_exits_zero_when_all_valid(home, tmp_path):
    cases = tmp_path / "cases.jsonl"
    cases.write_text(lines({"tool": "memory_read", "origin": ""}, {"tool": "mcp__gh__issues", "origin": "https://mcp.x"}))
    result = tabwarden("policy", "check", "--cases", str(cases), home=home)
    assert result.returncode == 0, result.stderr
    out = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(o["verdict"], o["code"]) for o in out] == [("allow", "always_allowed"), ("ask", "policy_default")]
    missing = tabwarden("policy", "check", "--cases", str(tmp_path / "nope.jsonl"), home=home)
    assert missing.returncode == 2 and "cannot read" in missing.stderr


def test_explain_prints_the_trace(home):
    result = tabwarden("policy", "explain", stdin=lines(
        {"tool": "type", "params": {"ref": "a", "text": "4111 1111 1111 1111"}, "origin": "https://shop.example.com",
         "name": "card to a shop"}), home=home)
    assert result.returncode == 0
    text = result.stdout
    assert "line 1 [card to a shop]: type @ https://shop.example.com -> ASK (sensitive_payload)" in text
    assert "sensitive_payload  HIT" in text and "findings: card_number" in text
    assert "rule_deny" in text and "pass" in text


def test_policy_test_reports_mismatches_with_line_numbers(home, tmp_path):
    expectations = tmp_path / "expect.jsonl"
    expectations.write_text(lines(
        {"tool": "click", "origin": "https://www.chase.com", "policy": "auto", "expect": "deny",
         "expect_code": "sensitive_origin"},
        {"tool": "click", "origin": "https://shop.example.com", "policy": "auto", "expect": "allow"},
        {"tool": "click", "origin": "https://shop.example.com", "expect": "allow", "name": "wrong on purpose"},
        {"tool": "run_javascript", "origin": "https://x.example", "expect": "deny", "expect_code": "rule_deny"},
    ))
    result = tabwarden("policy", "test", str(expectations), "--bare", home=home)
    assert result.returncode == 1
    assert result.stdout.startswith("rules: bare")
    mismatches = [line for line in result.stdout.splitlines() if line.startswith("line ")]
    assert mismatches[0].startswith("line 3 [wrong on purpose]: expected allow, got ask (policy_default)")
    assert mismatches[1].startswith("line 4: expected deny (rule_deny), got ask (commit)")
    assert len(mismatches) == 2 and "4 cases, 2 mismatched" in result.stdout
    installed = tabwarden("policy", "test", str(expectations), home=home)  # the built-in rule denies
    assert "4 cases, 1 mismatched" in installed.stdout and "line 4" not in installed.stdout


def test_policy_test_passes_against_a_policy_file(home, tmp_path):
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"rules": [{"tool": "run_javascript", "origin": "*", "verdict": "deny"},
                                            {"tool": "click", "origin": "*.shop.example.com", "verdict": "allow"}]}))
    expectations = tmp_path / "expect.jsonl"
    expectations.write_text(lines(
        {"tool": "run_javascript", "origin": "https://x.example", "expect": "deny", "expect_code": "rule_deny"},
        {"tool": "click", "origin": "https://a.shop.example.com", "expect": "allow"}))
    result = tabwarden("policy", "test", str(expectations), "--policy", str(policy), home=home)
    assert result.returncode == 0, result.stdout + result.stderr
    bad = tmp_path / "bad.json"
    bad.write_text('{"rules": [{"tool": "click", "verdict": "deny", "origin": "a*b"}]}')
    result = tabwarden("policy", "test", str(expectations), "--policy", str(bad), home=home)
    assert result.returncode == 2 and "$.rules[0].origin" in result.stderr


def test_installed_base_uses_the_user_file(home, tmp_path):
    config = home / "config"
    config.mkdir(parents=True)
    (config / "policy.json").write_text(json.dumps({"policy": "auto", "sensitive_origins": ["*.mine.example"]}))
    result = tabwarden("policy", "check", "--installed", home=home, stdin=lines(
        {"tool": "click", "origin": "https://shop.example.com"}, {"tool": "click", "origin": "https://a.mine.example"}))
    out = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(o["verdict"], o["code"]) for o in out] == [("allow", "policy_default"), ("deny", "sensitive_origin")]


def _seed_audit(home: Path) -> Path:
    from host.gatekeeper.service import CheckRequest, Gatekeeper
    from host.store import Store

    db = home / "data" / "tabwarden.sqlite3"
    store = Store(db)
    gk = Gatekeeper(store, user_policy=home / "none.json", managed_policy=home / "none2.json")
    gk.check(CheckRequest(thread_id="t1", tool="click", params={"ref": "a"}, origin="https://a.example"))
    gk.check(CheckRequest(thread_id="t2", tool="navigate", params={"url": "javascript:1"}, origin="https://a.example"))
    gk.check(CheckRequest(thread_id="t1", tool="type", params={"ref": "a", "password": "hunter2"},
                          origin="https://a.example"))
    store.close()
    return db


def test_audit_list_export_verify(home):
    db = _seed_audit(home)
    listed = tabwarden("audit", "list", "--thread", "t1", home=home)
    assert listed.returncode == 0 and "ask (policy_default)" in listed.stdout and "t2" not in listed.stdout
    exported = tabwarden("audit", "export", "--verdict", "deny", home=home)
    rows = [json.loads(line) for line in exported.stdout.splitlines()]
    assert [(r["thread_id"], r["code"]) for r in rows] == [("t2", "script_scheme")]
    everything = tabwarden("audit", "export", "--since", "1h", home=home)
    assert "hunter2" not in everything.stdout and len(everything.stdout.splitlines()) == 3
    assert tabwarden("audit", "export", "--since", "2999-01-01T00:00:00", home=home).stdout == ""
    verified = tabwarden("audit", "verify", home=home)
    assert verified.returncode == 0 and "3 rows" in verified.stdout

    import sqlite3

    conn = sqlite3.connect(db)
    conn.execute("DROP TRIGGER audit_log_no_update")
    conn.execute("UPDATE audit_log SET verdict = 'allow' WHERE seq = 2")
    conn.commit()
    conn.close()
    broken = tabwarden("audit", "verify", "--db", str(db), home=home)
    assert broken.returncode == 1 and "BROKEN at row 2" in broken.stdout


def test_audit_bad_since_is_a_usage_error(home):
    result = tabwarden("audit", "list", "--since", "yesterday-ish", home=home)
    assert result.returncode == 2 and "no time" in result.stderr


def test_check_judges_where_an_element_leads(home):
    result = tabwarden("policy", "check", home=home, stdin=lines(
        {"tool": "click", "origin": "https://shop.example", "policy": "auto", "scope_lock": ["https://shop.example"],
         "target": {"destination": "https://pay.attacker.example/checkout", "method": "POST"}},
        {"tool": "click", "origin": "https://shop.example", "policy": "auto",
         "target": {"destinations": [{"url": "https://shop.example/next"}]}},
    ))
    out = [json.loads(line) for line in result.stdout.splitlines()]
    assert result.returncode == 0, result.stderr
    assert (out[0]["verdict"], out[0]["code"], out[0]["target_origin"]) == \
        ("deny", "scope_lock", "https://pay.attacker.example")
    assert (out[1]["verdict"], out[1]["target_origin"]) == ("allow", "https://shop.example")


def test_target_facts_reproduce_decisions_on_facts(home):
    card_rest = {"tool": "type", "params": {"ref": "s1_1_2", "element": "Notes", "text": "1111 1111", "mode": "append"},
                 "origin": "https://shop.example", "policy": "auto",
                 "target": {"role": "textbox", "name": "Notes", "value": "4111 1111 "}}
    cvv = {"tool": "type", "params": {"ref": "s1_1_3", "element": "box", "text": "123"},
           "origin": "https://shop.example", "policy": "auto", "target": {"autocomplete": "cc-csc", "name": "Code"}}
    add = {"tool": "click", "params": {"ref": "s1_1_4", "element": "Add to cart (the second button)"},
           "origin": "https://shop.example", "policy": "untrusted",
           "rules": [{"tool": "click", "origin": "*", "verdict": "allow", "args": {"name": "^Add to cart"}}],
           "target": {"role": "button", "name": "Delete my account"}}
    bad_key = {"tool": "type", "target": {"autocompletion": "cc-csc"}}
    bad_type = {"tool": "type", "target": {"value": 4111}}
    on_element = {"tool": "click", "rules": [{"tool": "click", "origin": "*", "verdict": "allow",
                                             "args": {"element": "^Add"}}]}
    result = tabwarden("policy", "check", stdin=lines(card_rest, cvv, add, bad_key, bad_type, on_element), home=home)
    out = [json.loads(line) for line in result.stdout.splitlines()]
    assert (out[0]["verdict"], out[0]["code"]) == ("ask", "sensitive_payload")
    assert (out[1]["verdict"], out[1]["code"]) == ("ask", "sensitive_payload")
    assert (out[2]["verdict"], out[2]["code"]) == ("ask", "commit")
    assert out[3]["error"]["path"] == "$.target"
    assert "autocomplete" in out[3]["error"]["message"]
    assert out[4]["error"]["path"] == "$.target.value"
    assert out[5]["error"]["path"] == "$.rules[0].args.element" and "`name`" in out[5]["error"]["message"]
