"""Gatekeeper decision speed, side by side with Agentao 0.5.17's `PermissionEngine.decide()`.

    python -m bench.bench_gatekeeper [--quick] [--no-agentao]

For 0, 10, 100, 1,000 and 10,000 rules, a fixed mix of calls is decided over and over and the
median time of one decision is printed, together with:
  * the anchor: the median time of `json.loads` on a tiny document, measured the same way in the
    same run, so figures from different machines compare as "decisions cost N anchors";
  * Agentao's `decide()` on the equivalent rule set (same tool patterns, origins as domain lists,
    same args regexes, ordered by our priority since Agentao takes the first match), installed
    into a scratch virtual environment under a temporary folder for this run only.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.common import checks_ns, median_ns

SIZES = (0, 10, 100, 1000, 10000)
AGENTAO = "agentao==0.5.17"
ANCHOR_DOC = '{"tool": "click", "params": {"ref": "s1_2_3"}}'
TOOLS = ("click", "type", "hover", "select_option", "navigate", "run_javascript", "press_key", "drag")
CATEGORIES = {"click": ("click", "click_xy", "click_trusted"), "fill": ("type", "type_trusted", "select_option",
              "press_key", "batch_actions"), "interact": ("hover", "drag")}

# (tool, params, tab origin): the fixed call mix.
CALLS = (
    ("click", {"ref": "s1_4_12", "element": "Add to cart"}, "https://shop.example.com"),
    ("type", {"ref": "s1_4_3", "element": "Search", "text": "cheap flights to paris"}, "https://site3.example1.com"),
    ("navigate", {"url": "https://docs.python.org/3/library/"}, "https://shop.example.com"),
    ("read_page", {"mode": "snapshot"}, "https://news.example.org"),
    ("screenshot", {"target": "viewport"}, "https://news.example.org"),
    ("mcp__srv5__create_issue", {"title": "Bug", "body": "It fails on save"}, "https://mcp.example.net"),
    ("run_javascript", {"code": "document.title"}, "https://app.example.com"),
    ("hover", {"ref": "s1_2_9", "element": "Menu"}, "https://www.chase.com"),
)


# Rules the call mix actually hits (from 10 rules up), so both engines also take their "match" path.
HIT_RULES = (
    {"tool": "click", "origin": "https://shop.example.com", "verdict": "allow"},
    {"tool": "category:fill", "origin": "*.example1.com", "verdict": "ask"},
    {"tool": "mcp__srv5__*", "origin": "*", "verdict": "allow"},
    {"tool": "run_javascript", "origin": "*", "verdict": "deny"},
    {"tool": "navigate", "origin": "*.python.org", "verdict": "allow"},
)


def make_rules(n: int, seed: int = 7) -> list[dict]:
    """n rules over many hosts: exact and suffix origins, categories, prefixes, args conditions;
    from 10 rules up, the `HIT_RULES` are spread among them."""
    rng = random.Random(seed)
    hosts = max(10, n // 4)
    rules = []
    hits = {i * n // len(HIT_RULES): rule for i, rule in enumerate(HIT_RULES)} if n >= 10 else {}
    for i in range(n):
        if i in hits:
            rules.append({**hits[i], "created_at": float(i), "id": str(i)})
            continue
        host = f"site{rng.randrange(hosts)}.example{rng.randrange(3)}.com"
        verdict = rng.choice(("allow", "ask", "deny"))
        kind = rng.random()
        if kind < 0.40:
            rule = {"tool": rng.choice(TOOLS), "origin": f"https://{host}"}
        elif kind < 0.60:
            rule = {"tool": rng.choice(TOOLS), "origin": f"*.{host}"}
        elif kind < 0.75:
            rule = {"tool": f"category:{rng.choice(sorted(CATEGORIES))}", "origin": host}
        elif kind < 0.85:
            rule = {"tool": f"mcp__srv{rng.randrange(hosts)}__*", "origin": "*"}
        elif kind < 0.95:
            rule = {"tool": rng.choice(TOOLS), "origin": f"https://{host}", "args": {"text": f"^secret-{i}"}}
        else:
            rule = {"tool": "*", "origin": f"https://{host}"}
        rules.append({**rule, "verdict": verdict, "created_at": float(i), "id": str(i)})
    return rules


def anchor_ns(samples: int = 20000) -> float:
    """The anchor: median ns of json.loads on a tiny document."""
    doc = ANCHOR_DOC
    loads = json.loads
    return median_ns(lambda: loads(doc), samples)


def rule_verdicts(n: int) -> list[str | None]:
    """The verdict of the winning rule (not of the whole check) for each call of the mix."""
    from host.gatekeeper.origins import destination, normalize_origin
    from host.gatekeeper.rules import Rule, RuleSet
    from host.tools.catalog import lookup

    ruleset = RuleSet(Rule(**r) for r in make_rules(n))
    out = []
    for tool, params, origin in CALLS:
        spec = lookup(tool)
        where = destination(params["url"]).origin if spec.url_param else normalize_origin(origin)
        rule = ruleset.match(spec.name, spec.category, where, params)
        out.append(rule.verdict if rule else None)
    return out


def bench_ours(n: int, rounds: int) -> float:
    """Median ns of one `check()` with n rules over the call mix."""
    from host.gatekeeper.decision import Call, Context
    from host.gatekeeper.rules import Rule, RuleSet

    ruleset = RuleSet(Rule(**r) for r in make_rules(n))
    cases = [(Call(tool, params), Context(origin=origin, rules=ruleset)) for tool, params, origin in CALLS]
    return statistics.median(checks_ns(cases, rounds))


# -- Agentao, in its own scratch environment ------------------------------------------------------

def _tool_regex(pattern: str) -> str:
    import re

    if pattern == "*":
        return "*"
    if pattern.startswith("category:"):
        return "(?:" + "|".join(re.escape(t) for t in CATEGORIES[pattern.split(":", 1)[1]]) + ")"
    if pattern.endswith("*"):
        return re.escape(pattern[:-1]) + ".*"
    return re.escape(pattern)


def agentao_rules(rules: list[dict]) -> list[dict]:
    """The same rules in Agentao's shape, ordered by our priority (Agentao takes the first match)."""
    from host.gatekeeper.rules import Rule, compile_rule

    ordered = sorted((compile_rule(Rule(**r), order=i) for i, r in enumerate(rules)), key=lambda c: c.sort_key)
    out = []
    for compiled in ordered:
        rule, origin = compiled.rule, compiled.origin
        item: dict = {"tool": _tool_regex(rule.tool), "action": rule.verdict}
        if origin.kind == "suffix":
            item["domain"] = {"allowlist": [f".{origin.host}"], "url_arg": "origin"}
        elif origin.kind in ("exact", "host"):
            item["domain"] = {"allowlist": [origin.host], "url_arg": "origin"}
        if rule.args:
            item["args"] = dict(rule.args)
        out.append(item)
    return out


_AGENTAO_SCRIPT = r"""
import json, statistics, sys, tempfile, time
from pathlib import Path
from agentao.permissions import PermissionEngine

job = json.load(sys.stdin)
timer = time.perf_counter_ns

def median_ns(fn, samples):
    times = []
    for _ in range(samples):
        start = timer(); fn(); times.append(timer() - start)
    return statistics.median(times)

doc = job["anchor_doc"]
result = {"anchor_ns": median_ns(lambda: json.loads(doc), 20000), "sizes": {}, "verdicts": {}}
root = Path(tempfile.mkdtemp())
for size, rules in job["rule_sets"].items():
    engine = PermissionEngine(project_root=root, rules=rules, loaded_sources=["bench"])
    calls = [(tool, {**params, "origin": params.get("url", origin)}) for tool, params, origin in job["calls"]]
    verdicts = []
    for tool, args in calls:
        detail = engine.decide_detail(tool, args)
        user_rule = detail is not None and detail.reason.startswith("user-rule")
        verdicts.append(detail.decision.value if user_rule else None)
    result["verdicts"][size] = verdicts
    start = time.perf_counter()
    for tool, args in calls:
        engine.decide(tool, args)
    per_round = time.perf_counter() - start
    rounds = max(3, min(job["rounds"], int(job["budget_s"] / max(per_round, 1e-9))))
    times = []
    for _ in range(rounds):
        for tool, args in calls:
            t0 = timer(); engine.decide(tool, args); times.append(timer() - t0)
    result["sizes"][size] = statistics.median(times)
json.dump(result, sys.stdout)
"""


def bench_agentao(sizes, rounds: int, budget_s: float) -> tuple[dict | None, str]:
    """Install Agentao into a scratch venv and time it there; (results, note)."""
    with tempfile.TemporaryDirectory(prefix="tabwarden-bench-") as scratch:
        venv = Path(scratch) / "venv"
        try:
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=300)
        except (subprocess.SubprocessError, OSError) as exc:
            return None, f"cannot create a scratch venv: {exc}"
        python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
        install = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                                  AGENTAO], capture_output=True, text=True, timeout=900)
        if install.returncode != 0:
            tail = (install.stderr or install.stdout).strip().splitlines()[-1:] or ["(no output)"]
            return None, f"{AGENTAO} could not be installed from the package index: {tail[0]}"
        job = {"anchor_doc": ANCHOR_DOC, "calls": CALLS, "rounds": rounds, "budget_s": budget_s,
               "rule_sets": {str(n): agentao_rules(make_rules(n)) for n in sizes}}
        run = subprocess.run([str(python), "-c", _AGENTAO_SCRIPT], input=json.dumps(job), capture_output=True,
                             text=True, timeout=3600)
        if run.returncode != 0:
            tail = run.stderr.strip().splitlines()[-1:] or ["(no output)"]
            return None, f"{AGENTAO} failed while benchmarking: {tail[0]}"
        return json.loads(run.stdout), f"{AGENTAO} in a scratch venv (same interpreter version)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_gatekeeper", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a smoke run)")
    parser.add_argument("--no-agentao", action="store_true", help="skip the Agentao comparison")
    args = parser.parse_args(argv)
    rounds = 50 if args.quick else 400
    sizes = SIZES

    # The anchor is measured before and after our runs; the lower figure is the less disturbed one.
    first_anchor = anchor_ns()
    ours = {n: bench_ours(n, rounds) for n in sizes}
    anchor = min(first_anchor, anchor_ns())
    theirs, note = (None, "skipped (--no-agentao)") if args.no_agentao else bench_agentao(
        sizes, rounds, 1.0 if args.quick else 3.0)

    print("Gatekeeper decision time: median of one check() over a fixed mix of "
          f"{len(CALLS)} calls ({rounds} rounds)")
    print(f"anchor: json.loads of a tiny document = {anchor:.0f} ns (this process)")
    if theirs is not None:
        print(f"Agentao: {note}; its anchor = {theirs['anchor_ns']:.0f} ns")
    else:
        print(f"Agentao: not measured: {note}")
    header = f"{'rules':>6}  {'ours µs':>8}  {'ours/anchor':>11}"
    if theirs is not None:
        header += f"  {'agentao µs':>10}  {'agentao/anchor':>14}  {'agentao/ours':>12}"
    print(header)
    for n in sizes:
        line = f"{n:>6}  {ours[n] / 1000:>8.2f}  {ours[n] / anchor:>11.1f}"
        if theirs is not None:
            t = theirs["sizes"][str(n)]
            line += f"  {t / 1000:>10.2f}  {t / theirs['anchor_ns']:>14.1f}  {t / ours[n]:>12.1f}"
        print(line)
    if theirs is not None:
        agree = all(theirs["verdicts"][str(n)] == rule_verdicts(n) for n in sizes)
        print(f"equivalent rule sets: winning-rule verdicts on the call mix {'agree' if agree else 'DIFFER'} "
              "at every size")
    worst = max(ours.values()) / 1000
    # The consequence model (what a write commits) and provenance run inside every check now.
    print(f"target p50 <= 30 µs per decision with the consequence model, at every size: "
          f"{'met' if worst <= 30 else 'NOT met'} (worst {worst:.2f} µs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
