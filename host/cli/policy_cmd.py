"""`tabwarden policy check|explain|test`: ask the gatekeeper about calls, from the command line.

Cases are JSON Lines, one call per line, or JSON documents over several lines (see `tabwarden
policy check --help`). Every case is added to the rules the live host uses (stored rules and
origin lists, the user and managed policy files) unless `--bare` answers it alone or `--policy
FILE` tries FILE in place of the user's policy file; which set answered is always printed.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any, TextIO

import msgspec

from host.cli.case_stream import Piece, read_cases
from host.cli.policy_base import BARE, Base, BaseError, installed

from protocol.permissions import DEFAULT_POLICY, PERMISSION_POLICIES, VERDICTS
from protocol.errors import TabwardenError
from protocol.tools import TOOL_EFFECTS, TOOL_LEVELS

CASE_HELP = """\
A case (one JSON object per line, or one object over several lines; every field but `tool`
may be omitted):
  {"tool": "click", "effects": "write", "level": "L1", "params": {"ref": "s1_2_3"},
   "origin": "https://shop.example.com",           (the tab's origin; "" for origin-less calls)
   "policy": "untrusted",                           (always | untrusted | auto)
   "rules": [{"tool": "click", "origin": "*", "verdict": "deny", "source": "user_setting"}],
   "sensitive_origins": [], "guarded_origins": [], "scope_lock": null,
   "grants": [["click", "https://shop.example.com"]],
   "scope_origins": ["https://shop.example.com"],
   "target": {"input_type": "password",             (facts of the acted-on element: what the
              "role": "textbox", "name": "PIN",         page says it is; its autocomplete token
              "autocomplete": "cc-csc",                 and name attribute; its value before the
              "field_name": "pin", "value": "4111 ",    call; where it leads, and how: a link, or
              "destination": "https://pay.example/x",  the form its value is sent with; `hints`
              "method": "POST"},                        and `values` for the refs of a batch)
   "provenance": {"user": ["the user's words", ...],  (what the thread's model was shown: the
                  "untrusted": [{"origin": "https://bank.example",   user's own words, and what
                                 "text": "what a tool showed"}]},     tools showed, with origin;
                                                    without it values are not judged by origin)
   "expect": "deny", "expect_code": "rule_deny"}    (for `policy test`)
Answer per line: {"verdict", "code", "flags", "target_origin", "rule", "reason", "untrusted_values"?}, or
{"error": {"code", "message", "line", "path"}} for a malformed line (processing goes on).
Cases are added to the rules the host uses (`rules: installed ...`, printed first: on stderr for
`check`, whose output stays JSON Lines); `--bare` answers each case alone.
Exit status: 0 when every case was valid (and, for `test`, met its expectation), 1 otherwise,
2 when the cases or the installed rules cannot be read."""

# Older names a case may still use; the gatekeeper maps them onto the three policies.
LEGACY_POLICY_NAMES = ("read-only", "on-request", "on-failure", "never")
POLICY_NAMES = (*PERMISSION_POLICIES, *LEGACY_POLICY_NAMES)


class CaseError(TabwardenError):
    def __init__(self, code: str, message: str, path: str = "$") -> None:
        super().__init__(message)
        self.code, self.message, self.path = code, message, path


def add_arguments(parser: argparse.ArgumentParser, name: str) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = CASE_HELP
    sub = parser.add_subparsers(dest="action", required=True, metavar="{check,explain,test}")
    for action, summary in (("check", "decide each case and print one JSON line per case"),
                            ("explain", "print the steps of each decision for people"),
                            ("test", "run an expectations file; non-zero exit on any mismatch")):
        p = sub.add_parser(action, help=summary, description=summary, epilog=CASE_HELP,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        if action == "test":
            p.add_argument("file", type=Path, help="file of cases (JSON Lines or multi-line objects), each with an "
                                                   "`expect` verdict")
        else:
            p.add_argument("--cases", type=Path, metavar="FILE", help="read cases from FILE instead of stdin")
        base = p.add_mutually_exclusive_group()
        base.add_argument("--bare", action="store_true",
                          help="answer each case alone: no stored rules, lists or policy files")
        base.add_argument("--installed", action="store_true",
                          help="the installed rules (the default; accepted for older scripts)")
        base.add_argument("--policy", type=Path, metavar="FILE",
                          help="the installed rules with FILE in place of the user's policy file")


def run(args: argparse.Namespace) -> int:
    try:
        base = _load_base(args)
    except (CaseError, BaseError) as exc:
        print(f"tabwarden policy: {exc.message}", file=sys.stderr)
        return 2
    _tell_base(base, sys.stderr if args.action == "check" else sys.stdout)
    if args.action == "test":
        try:
            stream = args.file.open(encoding="utf-8")
        except OSError as exc:
            print(f"tabwarden policy test: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
            return 2
        with stream:
            return _run_test(stream, base, sys.stdout)
    if args.cases is not None:
        try:
            stream = args.cases.open(encoding="utf-8")
        except OSError as exc:
            print(f"tabwarden policy {args.action}: cannot read {args.cases}: {exc.strerror}", file=sys.stderr)
            return 2
    else:
        stream = sys.stdin
        if stream.isatty():  # otherwise it looks as if the command hung
            print("reading cases from the terminal; end with Ctrl-D (see --help for the format)", file=sys.stderr)
    with stream:
        if args.action == "check":
            return _run_check(stream, base, sys.stdout)
        return _run_explain(stream, base, sys.stdout)


# -- the base policy -----------------------------------------------------------------------------

def _load_base(args: argparse.Namespace) -> Base:
    if args.bare:
        return BARE
    path = args.policy
    if path is not None:
        from host.gatekeeper.policy_files import PolicyFileError, load_policy_file

        try:  # checked on its own first, for errors that name this file's fields
            layer = load_policy_file(path, managed=False)
        except PolicyFileError as exc:
            raise CaseError("invalid_policy_file", "; ".join(str(e) for e in exc.errors)) from None
        if layer is None:
            raise CaseError("invalid_policy_file", f"{path}: no such file")
    return installed(path)


def _tell_base(base: Base, out: TextIO) -> None:
    out.write(base.label + "\n")
    for warning in base.warnings:
        out.write(f"  warning: {warning}\n")
    out.flush()


# -- cases ---------------------------------------------------------------------------------------

def _field(obj: dict, key: str, kind: type | tuple, default: Any = None) -> Any:
    value = obj.get(key, default)
    if value is not None and not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise CaseError("invalid_case", f"expected {names}, got {type(value).__name__}", f"$.{key}")
    return value


def _strings(obj: dict, key: str) -> list[str]:
    values = _field(obj, key, list) or []
    for index, value in enumerate(values):
        if not isinstance(value, str):
            raise CaseError("invalid_case", f"expected str, got {type(value).__name__}", f"$.{key}[{index}]")
    return values


_KNOWN = {"tool", "effects", "level", "params", "origin", "policy", "rules", "sensitive_origins",
          "guarded_origins", "scope_lock", "grants", "scope_origins", "target", "expect", "expect_code", "name",
          "provenance"}


class _Seen(msgspec.Struct, forbid_unknown_fields=True):
    origin: str
    text: str


class _WhatIfProvenance(msgspec.Struct, forbid_unknown_fields=True):
    user: list[str] = []
    own: list[str] = []  # the user's own details from settings
    untrusted: list[_Seen] = []


def parse_provenance(value: Any, path: str = "$.provenance"):
    """The what-if provenance of a case as an index; `CaseError` naming the path of a bad part."""
    from host.gatekeeper.provenance import Provenance

    try:
        given = msgspec.convert(value, _WhatIfProvenance)
    except msgspec.ValidationError as exc:
        message, _, where = str(exc).partition(" - at `")
        where = path + where.rstrip("`")[1:]
        missing = re.match(r"Object (?:missing required|contains unknown) field `([^`]+)`", message)
        if missing:  # name the field itself, as for every other bad part
            where += f".{missing.group(1)}"
        raise CaseError("invalid_provenance", message, where) from None
    index = Provenance()
    for text in given.user:
        index.add_user(text)
        index.consent.add_message(text)
    for text in given.own:
        index.add_own(text)
    for seen in given.untrusted:
        index.add_untrusted(seen.text, seen.origin)
    return index


def parse_case(piece: Piece, base: Base):
    """Turn one read case into (Call, Context, case dict); raise `CaseError` naming the problem."""
    from host.gatekeeper.decision import Call, Context
    from host.gatekeeper.errors import InvalidInput
    from host.gatekeeper.origins import normalize_origin
    from host.gatekeeper.patterns import OriginSet, PatternError, parse_origin_pattern
    from host.gatekeeper.policy import normalize_policy
    from host.gatekeeper.rules import RuleSet, parse_rule
    from host.gatekeeper.sensitive import OriginLists
    from host.tools.catalog import lookup

    if piece.error is not None:
        raise CaseError("invalid_json", piece.error)
    obj = piece.value
    if not isinstance(obj, dict):
        raise CaseError("invalid_case", f"a case is a JSON object, got {type(obj).__name__}")
    unknown = sorted(set(obj) - _KNOWN)
    if unknown:
        raise CaseError("invalid_case", f"unknown field {unknown[0]!r}", f"$.{unknown[0]}")
    tool = obj.get("tool")
    if not isinstance(tool, str) or not tool:
        raise CaseError("invalid_case", "`tool` is required and must be a non-empty string", "$.tool")
    effects = _field(obj, "effects", str)
    if effects is not None and effects not in TOOL_EFFECTS:
        raise CaseError("invalid_case", f"effects must be {_one_of(TOOL_EFFECTS)}, got {effects!r}", "$.effects")
    level = _field(obj, "level", str)
    if level is not None and level not in TOOL_LEVELS:
        raise CaseError("invalid_case", f"level must be {_one_of(TOOL_LEVELS)}, got {level!r}", "$.level")
    if effects is None and lookup(tool) is None:
        from host.gatekeeper.tool_names import closest_tool

        nearest = closest_tool(tool)
        hint = f"did you mean {nearest!r}? If not, " if nearest else ""
        raise CaseError("unknown_tool", f"no tool is called {tool!r}: {hint}give its `effects` (read or write) "
                        "to judge it as an outside tool", "$.effects")
    params = _field(obj, "params", dict, {})
    origin = _field(obj, "origin", str, "")
    policy_name = _field(obj, "policy", str)
    if policy_name is not None and policy_name not in POLICY_NAMES:
        raise CaseError("invalid_case", f"unknown policy {policy_name!r}; expected {_one_of(PERMISSION_POLICIES)}",
                        "$.policy")
    policy = normalize_policy(policy_name) or base.policy or DEFAULT_POLICY
    rules = list(base.rules)
    for index, rule in enumerate(_field(obj, "rules", list) or []):
        try:
            rules.append(parse_rule(rule, path=f"$.rules[{index}]"))
        except InvalidInput as exc:
            code = exc.code if exc.code == "unknown_tool" else "invalid_rule"
            raise CaseError(code, exc.message, exc.path) from None
    patterns: dict[str, list[str]] = {}
    for key in ("sensitive_origins", "guarded_origins", "scope_lock", "scope_origins"):
        patterns[key] = _strings(obj, key)
        if key != "scope_origins":
            for index, text in enumerate(patterns[key]):
                try:
                    parse_origin_pattern(text)
                except PatternError as exc:
                    raise CaseError("invalid_pattern", str(exc), f"$.{key}[{index}]") from None
    lists = OriginLists([*base.blocked, *patterns["sensitive_origins"]], [*base.guarded, *patterns["guarded_origins"]])
    lock = OriginSet.parse(patterns["scope_lock"]) if obj.get("scope_lock") is not None else None
    grants = set()
    for index, grant in enumerate(_field(obj, "grants", list) or []):
        if not (isinstance(grant, list) and len(grant) == 2 and all(isinstance(g, str) for g in grant)):
            raise CaseError("invalid_case", "a grant is [tool, origin]", f"$.grants[{index}]")
        spec = lookup(grant[0])
        grants.add((spec.name if spec else grant[0], normalize_origin(grant[1]).text))
    target = _target(obj)
    for key in ("expect",):
        value = _field(obj, key, str)
        if value is not None and value not in VERDICTS:
            raise CaseError("invalid_case", f"expect must be {_one_of(VERDICTS)}, got {value!r}", "$.expect")
    _field(obj, "expect_code", str)
    provenance = parse_provenance(obj["provenance"]) if obj.get("provenance") is not None else None
    ctx = Context(origin=origin, policy=policy, rules=RuleSet(rules), lists=lists, grants=grants,
                  scope_origins={normalize_origin(o).text for o in patterns["scope_origins"]}, scope_lock=lock,
                  target=target, provenance=provenance)
    return Call(tool, params, effects, level), ctx, obj


def _target(obj: dict) -> dict[str, Any] | None:
    from host.gatekeeper.errors import InvalidInput
    from host.gatekeeper.what_if_target import parse_target

    raw = _field(obj, "target", dict)
    if raw is None:
        return None
    try:
        return parse_target(raw)
    except InvalidInput as exc:
        raise CaseError(exc.code, exc.message, exc.path) from None


def _one_of(names: tuple[str, ...]) -> str:
    return f"{', '.join(names[:-1])} or {names[-1]}"


def _decide(piece: Piece, base: Base):
    from host.gatekeeper.decision import check

    call, ctx, obj = parse_case(piece, base)
    return check(call, ctx), obj


def _answer(decision) -> dict[str, Any]:
    import msgspec

    return {"verdict": decision.verdict, "code": decision.code, "flags": list(decision.flags),
            "target_origin": decision.target_origin,
            "rule": msgspec.to_builtins(decision.rule) if decision.rule is not None else None,
            "reason": decision.reason, **({"untrusted_values": list(decision.untrusted)} if decision.untrusted else {}),
            **({"effect": decision.effect, "effect_facts": list(decision.effect_facts)} if decision.effect else {})}


def _error(exc: CaseError, line: int) -> dict[str, Any]:
    return {"error": {"code": exc.code, "message": exc.message, "line": line, "path": exc.path}}


def _run_check(stream: TextIO, base: Base, out: TextIO) -> int:
    status = 0
    for piece in read_cases(stream):
        number = piece.line
        try:
            decision, _ = _decide(piece, base)
            answer = _answer(decision)
        except CaseError as exc:
            answer, status = _error(exc, number), 1
        out.write(json.dumps(answer, ensure_ascii=False) + "\n")
        out.flush()
    return status


def _run_explain(stream: TextIO, base: Base, out: TextIO) -> int:
    status = 0
    for piece in read_cases(stream):
        number = piece.line
        try:
            decision, obj = _decide(piece, base)
        except CaseError as exc:
            out.write(f"line {number}: error {exc.code} at {exc.path}: {exc.message}\n\n")
            status = 1
            continue
        where = decision.target_origin or "(no origin)"
        label = f" [{obj['name']}]" if obj.get("name") else ""
        out.write(f"line {number}{label}: {decision.tool} @ {where} -> {decision.verdict.upper()} ({decision.code})\n")
        out.write(f"  {decision.reason}\n")
        if decision.effect:
            out.write(f"  effect: {decision.effect} ({'; '.join(decision.effect_facts)})\n")
        width = max(len(s.step) for s in decision.trace)
        for index, step in enumerate(decision.trace, start=1):
            mark = {"hit": "HIT ", "pass": "pass", "skip": "skip"}[step.outcome]
            out.write(f"  {index:2}. {step.step:<{width}}  {mark}  {step.detail}\n")
        if decision.flags:
            out.write(f"  flags: {', '.join(decision.flags)}\n")
        if decision.findings:
            out.write(f"  findings: {', '.join(decision.findings)}\n")
        for value in decision.untrusted:
            out.write(f"  not from the user: {value['what']} {json.dumps(value['value'], ensure_ascii=False)} "
                      f"(seen at {value['seenAt'] or 'nowhere still known'})\n")
        if decision.rule is not None:
            out.write(f"  rule: {decision.rule.describe()}\n")
        out.write("\n")
    return status


def _run_test(stream: TextIO, base: Base, out: TextIO) -> int:
    cases = failures = 0
    for piece in read_cases(stream):
        number = piece.line
        cases += 1
        try:
            decision, obj = _decide(piece, base)
        except CaseError as exc:
            failures += 1
            out.write(f"line {number}: error {exc.code} at {exc.path}: {exc.message}\n")
            continue
        expect, expect_code = obj.get("expect"), obj.get("expect_code")
        label = f" [{obj['name']}]" if obj.get("name") else ""
        if expect is None:
            failures += 1
            out.write(f"line {number}{label}: error invalid_case at $.expect: a test case needs `expect`\n")
            continue
        if decision.verdict != expect or (expect_code is not None and decision.code != expect_code):
            failures += 1
            wanted = f"{expect} ({expect_code})" if expect_code else expect
            out.write(f"line {number}{label}: expected {wanted}, got {decision.verdict} ({decision.code}): "
                      f"{decision.reason}\n")
    if cases == 0:  # an empty file tests nothing: a script must not take it for a pass
        out.write("policy test FAILED: the file holds no cases\n")
        return 1
    verdict = "ok" if failures == 0 else "FAILED"
    out.write(f"policy test {verdict}: {cases} cases, {failures} mismatched or invalid\n")
    return 0 if failures == 0 else 1
