import pytest
from hypothesis import given
from hypothesis import strategies as st

from host.gatekeeper.errors import InvalidInput
from host.gatekeeper.origins import normalize_origin
from host.gatekeeper.rules import Rule, RuleSet, parse_rule

from .conftest import decide


def winner(rules, tool="click", origin="https://x.com", params=None, category="click"):
    found = RuleSet(Rule(**r) for r in rules).match(tool, category, normalize_origin(origin), params or {})
    return found and (found.tool, found.origin, found.verdict, found.source)


def test_specificity_beats_verdict():
    rules = [dict(tool="click", origin="https://x.com", verdict="allow"), dict(tool="*", origin="https://x.com", verdict="deny")]
    assert winner(rules)[2] == "allow"


def test_source_beats_verdict_at_equal_specificity():
    rules = [dict(tool="click", origin="*", verdict="allow", source="user_setting"),
             dict(tool="click", origin="*", verdict="deny", source="approval_persist")]
    assert winner(rules)[2] == "allow"


def test_restrictiveness_breaks_ties_then_recency():
    rules = [dict(tool="click", origin="*", verdict="allow"), dict(tool="click", origin="*", verdict="ask")]
    assert winner(rules)[2] == "ask"
    rules = [dict(tool="click", origin="*", verdict="allow", created_at=1, id="old"),
             dict(tool="click", origin="*", verdict="allow", created_at=2, id="new")]
    assert RuleSet(Rule(**r) for r in rules).match("click", "click", normalize_origin("https://x.com"), {}).id == "new"


def test_suffix_deny_loses_to_exact_allow():
    rules = [dict(tool="*", origin="*.x.com", verdict="deny"), dict(tool="*", origin="https://a.x.com", verdict="allow")]
    assert winner(rules, origin="https://a.x.com")[2] == "allow"
    assert winner(rules, origin="https://b.x.com")[2] == "deny"


def test_category_prefix_and_any():
    assert winner([dict(tool="category:click", origin="*", verdict="ask")])[2] == "ask"
    assert winner([dict(tool="category:fill", origin="*", verdict="ask")]) is None
    assert winner([dict(tool="click*", origin="*", verdict="deny")], tool="click_xy")[2] == "deny"
    assert winner([dict(tool="mcp__github__*", origin="*", verdict="deny")], tool="mcp__github__x", category="mcp")
    assert winner([dict(tool="mcp__github__*", origin="*", verdict="deny")], tool="mcp__gitlab__x", category="mcp") is None


def test_managed_rules_cannot_be_loosened_by_a_more_specific_user_rule():
    rules = [dict(tool="click", origin="*", verdict="deny", source="managed"),
             dict(tool="click", origin="https://x.com", verdict="allow", source="user_setting")]
    assert winner(rules)[3] == "managed"
    # ...but a user may be stricter than the administrator.
    rules = [dict(tool="click", origin="*", verdict="allow", source="managed"),
             dict(tool="click", origin="https://x.com", verdict="deny", source="user_setting")]
    assert winner(rules)[2:] == ("deny", "user_setting")


# Rules with args conditions: a regular expression per parameter, all must match.
SEED_002 = [
    dict(tool="write_file", origin="*", verdict="allow", args={"path": "^/tmp/"}),
    dict(tool="write_file", origin="*", verdict="ask"),
    dict(tool="run_shell_command", origin="*", verdict="deny", args={"command": r"rm\s+-rf"}),
    dict(tool="run_shell_command", origin="*", verdict="allow", args={"command": "^docker ", "cwd": "^/var/app/"}),
]


@pytest.mark.parametrize("tool,params,expected", [
    ("write_file", {"path": "/tmp/safe.txt", "content": "..."}, "allow"),
    ("write_file", {"path": "/etc/passwd", "content": "..."}, "ask"),
    ("run_shell_command", {"command": "rm -rf /"}, "deny"),
    ("run_shell_command", {"command": "docker ps", "cwd": "/var/app/x"}, "allow"),
    ("run_shell_command", {"command": "docker ps", "cwd": "/home"}, None),  # both conditions must hold
    ("run_shell_command", {"cwd": "/var/app/"}, None),  # a missing parameter never matches
])
def test_seed_002_args_conditions(tool, params, expected):
    result = winner(SEED_002, tool=tool, params=params, category=None)
    assert (result[2] if result else None) == expected


def test_args_rule_outranks_the_same_rule_without_args():
    # A general rule listed first never shadows a more specific one: the order of the list is irrelevant.
    rules = [dict(tool="write_file", origin="*", verdict="ask"),
             dict(tool="write_file", origin="*", verdict="allow", args={"path": "^/tmp/"})]
    assert winner(rules, tool="write_file", params={"path": "/tmp/a"}, category=None)[2] == "allow"


def test_args_match_non_string_values_as_json():
    rules = [dict(tool="type", origin="*", verdict="deny", args={"submit": "^true$"})]
    assert winner(rules, tool="type", params={"submit": True}, category="fill")[2] == "deny"


@pytest.mark.parametrize("body,path", [
    ({"tool": "click", "origin": "*", "verdict": "maybe"}, "$.verdict"),
    ({"tool": "click", "origin": "*"}, "$"),
    ({"tool": 3, "origin": "*", "verdict": "deny"}, "$.tool"),
    ({"tool": "click", "origin": "a*b", "verdict": "deny"}, "$.origin"),
    ({"tool": "category:nope", "origin": "*", "verdict": "deny"}, "$.tool"),
    ({"tool": "click", "origin": "*", "verdict": "deny", "args": {"x": "("}}, "$.args.x"),
    ({"tool": "click", "origin": "*", "verdict": "deny", "source": "root"}, "$.source"),
    ({"tool": "click", "origin": "*", "verdict": "deny", "colour": "red"}, "$"),
])
def test_invalid_rules_name_the_bad_field(body, path):
    with pytest.raises(InvalidInput) as info:
        parse_rule(body)
    assert info.value.code == "invalid_rule" and info.value.path == path


def test_rules_are_stored_normalised():
    rule = parse_rule({"tool": "artifact_create", "origin": "*.EXAMPLE.com.", "verdict": "allow"})
    assert (rule.tool, rule.origin) == ("artifact", "*.example.com")


def test_default_run_javascript_rule_is_overridden_for_one_origin():
    rules = [dict(tool="run_javascript", origin="*", verdict="deny"),
             dict(tool="run_javascript", origin="https://x.com", verdict="allow")]
    assert decide("run_javascript", {"code": "1"}, origin="https://x.com", rules=rules).code == "rule_allow"
    assert decide("run_javascript", {"code": "1"}, origin="https://y.com", rules=rules).code == "rule_deny"


def test_index_finds_the_same_winner_as_a_linear_scan():
    # 2,000 rules over many hosts and tools: the index must agree with brute force.
    import itertools
    import random

    rng = random.Random(7)
    tools = ["click", "type", "*", "category:click", "category:fill", "cl*", "navigate"]
    origins = ["*", "*.a.com", "https://x.a.com", "b.com", "https://b.com", "*.com", "https://c.org:8443", "c.org"]
    rules = [Rule(tool=rng.choice(tools), origin=rng.choice(origins), verdict=rng.choice(["allow", "ask", "deny"]),
                  source=rng.choice(["user_setting", "approval_persist", "plugin_default"]), created_at=i, id=str(i))
             for i in range(2000)]
    rs = RuleSet(rules)
    from host.gatekeeper.rules import compile_rule

    compiled = [compile_rule(r, order=i) for i, r in enumerate(rules)]
    from host.gatekeeper.patterns import OriginSet

    for tool, cat, origin in itertools.product(["click", "type", "navigate"], ["click", "fill", "navigate"],
                                               ["https://x.a.com", "http://b.com", "https://c.org:8443", "https://z.com"]):
        o = normalize_origin(origin)

        def tool_ok(c):
            p = c.tool
            return (p.kind == "any" or (p.kind == "exact" and p.value == tool)
                    or (p.kind == "category" and p.value == cat) or (p.kind == "prefix" and tool.startswith(p.value)))

        brute = sorted((c for c in compiled if tool_ok(c) and OriginSet([c.origin]).match(o)), key=lambda c: c.sort_key)
        got = rs.match(tool, cat, o, {})
        assert (got.id if got else None) == (brute[0].rule.id if brute else None)


# -- conditions on facts, never on the model's words -------------------------------------------

DELETE = {"ref": "s1_1_9", "role": "button", "name": "Delete my account"}
ADD = {"ref": "s1_1_4", "role": "button", "name": "Add to cart"}
ADD_TO_CART = dict(tool="click", origin="*", verdict="allow", args={"name": "^Add to cart"})


def test_a_condition_on_name_matches_the_elements_accessible_name_not_the_models_text():
    params = {"element": "Add to cart (the second button)", "ref": "s1_1_9"}
    d = decide("click", params, policy="untrusted", rules=[ADD_TO_CART], target={"hints": [DELETE]})
    assert (d.verdict, d.code) == ("ask", "commit")  # the rule did not match: deleting an account asks
    d = decide("click", {"element": "the red one", "ref": "s1_1_4"}, policy="untrusted", rules=[ADD_TO_CART],
               target={"hints": [ADD]})
    assert (d.verdict, d.code) == ("allow", "rule_allow")


def test_without_facts_a_fact_condition_does_not_match():
    d = decide("click", {"element": "Add to cart", "ref": "s1_1_4"}, policy="untrusted", rules=[ADD_TO_CART])
    assert d.code == "policy_default"


def test_parameters_cannot_pose_as_facts():
    d = decide("click", {"element": "x", "ref": "s1_1_9", "name": "Add to cart"}, policy="untrusted",
               rules=[ADD_TO_CART], target={"hints": [DELETE]})
    assert d.code == "commit"


def test_role_and_destination_conditions():
    rules = [dict(tool="click", origin="*", verdict="deny", args={"to": r"^https://evil\.test/"}),
             dict(tool="click", origin="*", verdict="allow", args={"role": "^link$"})]
    link = {"ref": "s1_1_5", "role": "link", "name": "Docs", "destination": {"url": "https://shop.example.com/d"}}
    d = decide("click", {"element": "x", "ref": "s1_1_5"}, policy="untrusted", rules=rules,
               target={"hints": [link], "destinations": [{"url": "https://shop.example.com/d"}]})
    assert d.code == "rule_allow"
    d = decide("click", {"element": "x", "ref": "s1_1_5"}, policy="untrusted", rules=rules,
               target={"hints": [link], "destinations": [{"url": "https://evil.test/x"}]})
    assert d.code == "rule_deny"


def test_in_a_batch_an_allow_needs_every_element_and_a_deny_any():
    actions = [{"action": "click", "element": "Add to cart", "ref": "s1_1_4"},
               {"action": "click", "element": "Add to cart", "ref": "s1_1_9"}]
    facts = {"hints": [ADD, DELETE]}
    allow = dict(tool="batch_actions", origin="*", verdict="allow", args={"name": "^Add to cart"})
    assert decide("batch_actions", {"actions": actions}, policy="untrusted", rules=[allow],
                  target=facts).code == "commit"
    deny = dict(tool="batch_actions", origin="*", verdict="deny", args={"name": "Delete"})
    assert decide("batch_actions", {"actions": actions}, policy="auto", rules=[deny], target=facts).code == "rule_deny"
    assert decide("batch_actions", {"actions": actions}, policy="untrusted", rules=[allow],
                  target={"hints": [ADD, ADD]}).code == "rule_allow"


def test_a_condition_on_element_is_refused_with_what_to_use_instead():
    with pytest.raises(InvalidInput) as info:
        parse_rule({"tool": "click", "origin": "*", "verdict": "allow", "args": {"element": "^Add to cart"}})
    assert info.value.code == "invalid_rule" and info.value.path == "$.args.element"
    assert "`name`" in info.value.message and "`role`" in info.value.message and "`to`" in info.value.message


def test_a_stored_rule_on_element_never_matches():
    stored = dict(tool="click", origin="*", verdict="allow", args={"element": "^Add"})
    d = decide("click", {"element": "Add to cart", "ref": "s1_1_4"}, policy="untrusted", rules=[stored],
               target={"hints": [ADD]})
    assert d.code == "policy_default"


def test_a_policy_file_keying_a_condition_on_element_is_refused():
    import json

    from host.gatekeeper.policy_files import PolicyFileError, parse_policy

    body = {"version": 1, "rules": [{"tool": "click", "origin": "*.shop.example", "verdict": "allow",
                                     "args": {"element": "^Add to cart"}}]}
    with pytest.raises(PolicyFileError) as info:
        parse_policy(json.dumps(body), source="policy.json", rule_source="user_setting")
    [error] = info.value.errors
    assert error.path == "$.rules[0].args.element" and "`name`" in error.message
    body["rules"][0]["args"] = {"name": "^Add to cart"}
    layer = parse_policy(json.dumps(body), source="policy.json", rule_source="user_setting")
    assert layer.rules[0].args == {"name": "^Add to cart"}


@given(st.text(max_size=80), st.sampled_from(["Delete my account", "Transfer funds", "Remove", ""]))
def test_no_element_text_makes_a_name_condition_match_another_element(element, real_name):
    d = decide("click", {"element": "Add to cart " + element, "ref": "s1_1_9"}, policy="untrusted",
               rules=[ADD_TO_CART], target={"hints": [{"ref": "s1_1_9", "role": "button", "name": real_name}]})
    assert d.verdict == "ask" and d.code in ("policy_default", "commit")


def test_a_condition_on_a_batchs_actions_does_not_see_the_models_element_text():
    actions = [{"action": "click", "element": "Add to cart", "ref": "s1_1_9"}]
    rule = dict(tool="batch_actions", origin="*", verdict="allow", args={"actions": "Add to cart"})
    d = decide("batch_actions", {"actions": actions}, policy="untrusted", rules=[rule], target={"hints": [DELETE]})
    assert d.code == "commit"
