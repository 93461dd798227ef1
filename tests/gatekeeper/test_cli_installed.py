"""`tabwarden policy` answers with the rules the host uses, says which set answered, and reads
pretty-printed cases."""

import json
from pathlib import Path

import pytest

from tests.gatekeeper.test_cli import lines, tabwarden

RUN_JS = {"tool": "run_javascript", "origin": "https://shop.example.com"}


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


def _store_rule(home: Path, rule: dict) -> None:
    from host.gatekeeper.service import Gatekeeper
    from host.store import Store

    store = Store(home / "data" / "tabwarden.sqlite3")
    Gatekeeper(store, user_policy=home / "none.json", managed_policy=home / "none2.json").add_rule(rule)
    store.close()


def test_the_readme_example_answers_like_the_host(home):
    result = tabwarden("policy", "check", stdin=lines(RUN_JS), home=home)
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert (answer["verdict"], answer["code"]) == ("deny", "rule_deny")
    # The rule by its id and pattern, and where to change it.
    assert answer["reason"] == ("denied by rule run_javascript @ * (built-in), id default:run_javascript-deny; to change "
                                "that, delete it in Settings → Permission rules, or run "
                                "tw.remove_rule('default:run_javascript-deny') at the REPL")
    assert result.stderr.startswith("rules: installed (0 user rules + the built-in run_javascript deny;")
    assert not home.exists()  # asking creates nothing: the host makes its own database

    bare = tabwarden("policy", "check", "--bare", stdin=lines(RUN_JS), home=home)
    assert json.loads(bare.stdout)["verdict"] == "ask" and bare.stderr.startswith("rules: bare")
    alias = tabwarden("policy", "check", "--installed", stdin=lines(RUN_JS), home=home)
    assert json.loads(alias.stdout)["verdict"] == "deny"


def test_stored_rules_and_policy_files_are_counted(home):
    _store_rule(home, {"tool": "click", "origin": "*.shop.example.com", "verdict": "allow"})
    config = home / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "policy.json").write_text(json.dumps({"rules": [{"tool": "type", "origin": "*", "verdict": "deny"}]}))
    result = tabwarden("policy", "check", stdin=lines({"tool": "click", "origin": "https://a.shop.example.com"},
                                                      {"tool": "type", "origin": "https://a.example"}), home=home)
    out = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(o["verdict"], o["code"]) for o in out] == [("allow", "rule_allow"), ("deny", "rule_deny")]
    label = result.stderr.splitlines()[0]
    assert label.startswith("rules: installed (1 user rule + the built-in run_javascript deny; policy files: user ")
    assert "policy.json (1 rule), managed none; default policy Ask before changes (untrusted))" in label


def test_explain_reads_one_pretty_printed_case(home, tmp_path):
    case = tmp_path / "case.json"
    case.write_text(json.dumps(RUN_JS, indent=2) + "\n")
    assert case.read_text().count("\n") > 2
    with case.open() as stdin:
        result = tabwarden("policy", "explain", stdin=stdin.read(), home=home)
    assert result.returncode == 0, result.stdout + result.stderr
    first, second = result.stdout.splitlines()[:2]
    assert first.startswith("rules: installed")
    assert second == "line 1: run_javascript @ https://shop.example.com -> DENY (rule_deny)"
    assert "rule: run_javascript @ * (built-in)" in result.stdout


def test_pretty_printed_and_broken_cases_lose_nothing(home):
    stdin = (json.dumps({"tool": "click", "origin": "https://a.example"}, indent=2) + "\n"
             + '{"tool": "click"\n'  # never closed
             + json.dumps({"tool": "read_page", "origin": "https://a.example"}) + "\n")
    result = tabwarden("policy", "check", "--bare", stdin=stdin, home=home)
    out = [json.loads(line) for line in result.stdout.splitlines()]
    assert result.returncode == 1
    assert out[0]["verdict"] == "ask"
    assert out[1]["error"]["code"] == "invalid_json" and out[1]["error"]["line"] == 5
    assert out[2]["verdict"] == "allow"


def test_an_unknown_tool_names_the_nearest(home):
    result = tabwarden("policy", "check", "--bare", home=home, stdin=lines(
        {"tool": "click", "rules": [{"tool": "clik", "origin": "*", "verdict": "deny"}]}, {"tool": "clik"}))
    out = [json.loads(line) for line in result.stdout.splitlines()]
    assert out[0]["error"]["code"] == "unknown_tool" and out[0]["error"]["path"] == "$.rules[0].tool"
    assert "did you mean 'click'?" in out[0]["error"]["message"]
    assert out[1]["error"]["code"] == "unknown_tool" and "did you mean 'click'?" in out[1]["error"]["message"]


def test_a_policy_file_keeps_its_good_rules_and_reports_the_bad_one(home, tmp_path):
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"rules": [{"tool": "clik", "origin": "*", "verdict": "deny"},
                                            {"tool": "hover", "origin": "*", "verdict": "deny"}]}))
    result = tabwarden("policy", "check", "--policy", str(policy), home=home,
                       stdin=lines({"tool": "hover", "origin": "https://a.example"}))
    assert json.loads(result.stdout)["code"] == "rule_deny"
    assert "warning:" in result.stderr and "'clik'" in result.stderr and "did you mean 'click'?" in result.stderr
    assert "$.rules[0].tool" in result.stderr


def test_an_invalid_installed_policy_is_an_error_not_another_answer(home):
    config = home / "config"
    config.mkdir(parents=True)
    (config / "policy.json").write_text('{"rules": [{"tool": "click", "origin": "a*b", "verdict": "deny"}]}')
    result = tabwarden("policy", "check", stdin=lines(RUN_JS), home=home)
    assert result.returncode == 2 and result.stdout == ""
    message = result.stderr.strip()
    assert len(message.splitlines()) == 1
    assert "$.rules[0].origin" in message and "tabwarden doctor" in message and "--bare" in message


def test_an_empty_expectations_file_is_a_failure_that_says_so(home, tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    result = tabwarden("policy", "test", str(empty), home=home)
    assert result.returncode == 1 and "policy test FAILED: the file holds no cases" in result.stdout
    assert "ok" not in result.stdout.splitlines()[-1]
