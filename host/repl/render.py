"""Text for people: snapshots, snapshot diffs, tool results, gatekeeper decisions, tables,
audit rows and events. Pure functions from the host's JSON to strings (colour optional)."""

from __future__ import annotations

import json
import re
import time
from typing import Any, Iterable, Sequence

from protocol.permissions import describe_policy

from host.browser.diff import ADDED, CONTEXT_MARK, FOCUS, REMOVED, RENEWED
from host.browser.results import NEW_PAGE_DIVIDER
from host.gatekeeper.audit_trail import (VERDICT_WORDS, answer_words, decision_words, outcome_words, rule_words,
                                        with_words)
from host.repl.style import PLAIN, Style

_REF = re.compile(r"\[ref=[^\]]+\]")
VERDICT_COLOURS = {"allow": "green", "ask": "yellow", "deny": "red"}
STEP_MARKS = {"hit": "HIT ", "pass": "pass", "skip": "skip"}
SNAPSHOT_HEADER = "# Page Snapshot"
DIFF_HEADER = "# Page Changes"


def snapshot(text: str, style: Style = PLAIN) -> str:
    """A page snapshot with its header in bold and refs highlighted."""
    out = []
    for line in text.split("\n"):
        if line.startswith(SNAPSHOT_HEADER) or line.startswith("--- "):
            out.append(style(line, "bold"))
        else:
            out.append(_REF.sub(lambda m: style(m.group(0), "cyan"), line))
    return "\n".join(out)


def diff(text: str, style: Style = PLAIN) -> str:
    """A snapshot diff: added lines marked `+`, removed lines `-`, renewed refs and the focus as they are."""
    out, section = [], ""
    for line in text.split("\n"):
        if line.startswith(DIFF_HEADER):
            out.append(style(line, "bold"))
            continue
        if line in (ADDED, REMOVED, RENEWED, FOCUS) or line.startswith("Order changed"):
            section = line if not line.startswith("Order changed") else "Order changed"
            out.append(style(line, "bold"))
            continue
        if not line.strip():
            out.append(line)
        elif line.endswith(CONTEXT_MARK) or section == "Order changed":  # context, or lines that only moved
            out.append(snapshot(line, style))
        elif section == ADDED:
            out.append(style("+ " + line, "green"))
        elif section == REMOVED:
            out.append(style("- " + line, "red"))
        else:
            out.append(snapshot(line, style))
    return "\n".join(out)


def page_text(text: str, style: Style = PLAIN) -> str:
    """Tool output that may hold a snapshot or a diff, each part rendered as what it is."""
    parts = re.split(r"(?m)^(?=# Page Changes|# Page Snapshot|--- )", text)
    return "".join(diff(p, style) if p.startswith(DIFF_HEADER) else snapshot(p, style) for p in parts)


def verdict(word: str, style: Style = PLAIN) -> str:
    """ALLOW / ASK / DENY, coloured."""
    return style(word.upper(), "bold", VERDICT_COLOURS.get(word, "magenta"))


def code_words(code: Any, verdict_word: str | None = None) -> str:
    """A decision code followed by its words: `read_allowed: it only reads`."""
    words = decision_words(code, verdict_word)
    return f"{code}: {words}" if words else str(code)


# Failures about which tab a call acts on, and what to do about them at the REPL.
TAB_CODES = frozenset({"not_web_page", "tab_closed", "no_target"})
TAB_HINT = "tw.tabs() lists the open tabs with their ids; pass tab=<id>, or tw.use(<id>) to make one the default"
# Tools whose success means a new page in the tab, which may still be an error page.
NAVIGATIONS = frozenset({"navigate", "tab_open", "go_back", "go_forward"})
_ERROR_PAGE = re.compile(r"showing error page|chrome-error://", re.I)
_TITLE = re.compile(r"^Title: (.*)$", re.M)
_ERROR_CODE = re.compile(r"\bError code:?\s*([45]\d\d)\b")
_HTTP_STATUS = re.compile(r"\b([45]\d\d)\b[\s:.-]*(not found|forbidden|unauthori[sz]ed|bad request|gone|internal server "
                          r"error|bad gateway|service (?:temporarily )?unavailable|gateway time-?out|too many "
                          r"requests|not allowed|error)", re.I)


def navigation_failure(result: dict[str, Any]) -> str:
    """Why a navigation that the browser reports done did not load the page ("" when it did):
    Chrome's own error page (the site could not be reached), or a page whose title is an HTTP
    error's (`404 Not Found`). The browser tells the host neither the network error nor the HTTP
    status, so this reads what the result shows."""
    if not result.get("ok") or result.get("tool") not in NAVIGATIONS:
        return ""
    text = str(result.get("text") or "")
    url = (result.get("details") or {}).get("url") or ""
    if _ERROR_PAGE.search(text):
        return (f"Chrome showed its error page instead of {url or 'the page'}: the site could not be reached (no such "
                "host, refused, timed out or offline); look at the tab for Chrome's own words")
    page = text.split(NEW_PAGE_DIVIDER, 1)[-1]
    found = _TITLE.search(page)
    title = found.group(1).strip() if found else ""
    if _HTTP_STATUS.search(title):
        return f"the server answered with an HTTP error: the page is titled {title!r}"
    code = _ERROR_CODE.search(page) if "error" in title.lower() else None
    if code is not None:  # a bare server's page: "Error response", then "Error code: 404"
        return f"the server answered with HTTP error {code.group(1)}: the page is titled {title!r}"
    return ""


def tool_result(result: dict[str, Any], style: Style = PLAIN) -> str:
    """A ToolResult: a status line (tool, tab, the outcome in words), the gatekeeper's decision
    on its own line when the call failed after it was allowed, then the text. A navigation that
    ended on an error page is a failure, never shown beside an ALLOW."""
    tool = result.get("tool", "?")
    tab = result.get("tabId")
    where = f" [tab {tab}]" if tab is not None else ""
    details = result.get("details") or {}
    decision = details.get("decision")
    broken = navigation_failure(result)
    if result.get("ok") and not broken:
        head = f"{style('ok', 'green', 'bold')} {tool}{where}"
        if isinstance(decision, dict):
            head += f"  gatekeeper {_judged(decision.get('verdict'), decision.get('code'), style)}"
        return head + "\n" + page_text(_without_prefix(result.get("text", ""), tab), style)
    if broken:
        lines = [f"{style('failed', 'red', 'bold')} {tool}{where}: the navigation failed: {broken}"]
        lines += _allowed_then_failed(decision)
        lines.append("  the browser said: " + " ".join(_without_prefix(result.get("text", ""), tab)
                                                      .split(NEW_PAGE_DIVIDER)[0].split()))
        return "\n".join(lines)
    error = result.get("error") or {}
    code = error.get("code", "error")
    head = f"{style('failed', 'red', 'bold')} {tool}{where}: {style(code, 'red')}"
    if error.get("phase"):
        head += f" (phase {error['phase']})"
    lines = [head, f"  {error.get('message', result.get('text', ''))}"]
    if details.get("verdict"):
        lines.append(f"  gatekeeper {_judged(details['verdict'], details.get('reasonCode'), style)} - "
                     f"{details.get('reason', '')}")
        if details.get("rule"):
            lines.append(f"  rule: {details['rule']}")
        if details.get("flags"):
            lines.append(f"  flags: {', '.join(details['flags'])}")
    else:
        lines += _allowed_then_failed(decision)
    if code in TAB_CODES:
        lines.append(f"  {TAB_HINT}")
    return "\n".join(lines)


def _judged(word: Any, code: Any, style: Style) -> str:
    """`ALLOW (read_allowed): it only reads`: the verdict, its code, then the code's words."""
    words = decision_words(code, word)
    return f"{verdict(str(word or '?'), style)} ({code})" + (f": {words}" if words else "")


def _allowed_then_failed(decision: Any) -> list[str]:
    """The decision of a call that was allowed and then failed, in words (never `ALLOW` beside
    a failure)."""
    if not isinstance(decision, dict):
        return []
    word = str(decision.get("verdict"))
    said = VERDICT_WORDS.get(word, word)
    return [f"  the gatekeeper {said} it ({code_words(decision.get('code'), word)}); it was sent, and then failed"]


def _without_prefix(text: str, tab: Any) -> str:
    prefix = f"[tabId={tab}] "
    return text[len(prefix):] if tab is not None and text.startswith(prefix) else text


def decision(d: dict[str, Any], style: Style = PLAIN) -> str:
    """A gatekeeper decision with every step of its trace."""
    where = d.get("target_origin") or "(no origin)"
    lines = [f"{d.get('tool', '?')} @ {where} -> {_judged(d.get('verdict'), d.get('code'), style)}"
             f"   policy {describe_policy(d.get('policy', '?'))}, thread {d.get('threadId', '?')}",
             f"  {d.get('reason', '')}"]
    trace = d.get("trace") or []
    width = max((len(step.get("step", "")) for step in trace), default=0)
    for index, step in enumerate(trace, start=1):
        mark = STEP_MARKS.get(step.get("outcome", ""), step.get("outcome", ""))
        if mark == "HIT ":
            mark = style(mark, "bold", VERDICT_COLOURS.get(d.get("verdict", ""), "magenta"))
        lines.append(f"  {index:2}. {step.get('step', ''):<{width}}  {mark}  {step.get('detail', '')}")
    if d.get("flags"):
        lines.append(f"  flags: {', '.join(d['flags'])}")
    if d.get("findings"):
        lines.append(f"  findings: {', '.join(d['findings'])}")
    if d.get("ruleText"):
        lines.append(f"  rule: {d['ruleText']}")
    return "\n".join(lines)


def table(rows: Sequence[Sequence[Any]], headers: Sequence[str], style: Style = PLAIN) -> str:
    """Rows in aligned columns under bold headers (cells are clipped at 80 characters)."""
    cells = [[cell(v) for v in row] for row in rows]
    widths = [max([len(h)] + [visible_len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    lines = ["  ".join(style(h.ljust(w), "bold") for h, w in zip(headers, widths)).rstrip()]
    lines += ["  ".join(c + " " * (w - visible_len(c)) for c, w in zip(row, widths)).rstrip() for row in cells]
    if not rows:
        lines.append(style("(none)", "dim"))
    return "\n".join(lines)


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def visible_len(text: str) -> int:
    """Length on screen (colour codes take no room)."""
    return len(_ANSI.sub("", text))


def cell(value: Any) -> str:
    """One table cell: text as is, anything else as compact JSON, on one line, clipped."""
    if value is None:
        return "-"
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= 80 else text[:77] + "..."


def duration(ms: float | None) -> str:
    """Milliseconds as people read a wait: `42 s`, `5 min`, `1.5 h` (`-` when unknown)."""
    if ms is None:
        return "-"
    seconds = max(0, int(ms / 1000))
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    return f"{seconds / 3600:.1f} h"


def clock(at: float | None) -> str:
    """A local time of day for a timestamp in seconds (or milliseconds, as the pages send them)."""
    if not at:
        return "-"
    seconds = at / 1000 if at > 1e11 else at
    return time.strftime("%H:%M:%S", time.localtime(seconds))


def audit_rows(rows: Iterable[dict[str, Any]], style: Style = PLAIN, titles: dict[str, str] | None = None) -> str:
    """One line per audit row: seq, time, kind, thread, tool @ origin, what happened (each code
    followed by its words), and the thread's title when `titles` knows it."""
    lines = []
    for row in rows:
        outcome = ""
        if row.get("verdict"):
            outcome = _judged(row["verdict"], row.get("code"), style)
            rule = rule_words(row.get("rule"))
            outcome += f", {rule}" if rule else ""
            if row.get("detail") == "dispatch":
                outcome += " (checked again just before it ran)"
        elif row.get("approval_decision"):
            outcome = f"approval {with_words(row['approval_decision'], answer_words(row['approval_decision']))}"
        elif row.get("tool_outcome"):
            outcome = f"outcome {with_words(row['tool_outcome'], outcome_words(row['tool_outcome']))}"
            if row.get("detail"):
                outcome += f"; {row['detail']}"
        elif row.get("detail"):
            outcome = row["detail"]
        where = row.get("target_origin") or "(no origin)"
        thread = row.get("thread_id", "")
        title = (titles or {}).get(thread)
        named = f"  {style('thread', 'dim')} {title!r}" if title else ""
        lines.append(f"#{row.get('seq')} {clock(row.get('at'))} {row.get('kind', ''):<8} {thread}: "
                     f"{row.get('tool') or '-'} @ {where}  {outcome}{named}")
    return "\n".join(lines) if lines else style("(no audit rows)", "dim")


def readable(data: Any, style: Style = PLAIN, indent: str = "") -> str:
    """A host answer as lines people read: `key  value` for a mapping (nested ones indented),
    one line per item of a list, times (`...At`, `at`) as local clock times, never raw JSON."""
    if isinstance(data, dict):
        if not data:
            return indent + "(nothing)"
        width = max(len(str(k)) for k in data)
        lines = []
        for key, value in data.items():
            label = style(str(key).ljust(width), "bold")
            if isinstance(value, (dict, list)) and value and not _flat(value):
                lines.append(f"{indent}{style(str(key), 'bold')}")
                lines.append(readable(value, style, indent + "  "))
            else:
                lines.append(f"{indent}{label}  {_value(str(key), value)}")
        return "\n".join(lines)
    if isinstance(data, list):
        if not data:
            return indent + "(none)"
        return "\n".join(readable(item, style, indent + "  ") if isinstance(item, dict) and item
                         else f"{indent}- {_value('', item)}" for item in data)
    return indent + _value("", data)


def _flat(value: Any) -> bool:
    """A list of plain values (shown on one line)."""
    return isinstance(value, list) and all(not isinstance(v, (dict, list)) for v in value)


_TIME_KEYS = re.compile(r"(^|_)at$|At$|^(since|until|expires|updated|created)")


def _value(key: str, value: Any) -> str:
    """One value on one line: a time as a clock time, a list joined, booleans as yes/no."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)) and _TIME_KEYS.search(key) and value > 1e8:
        return clock(value)
    if isinstance(value, list):
        return ", ".join(_value("", v) for v in value) or "(none)"
    return cell(value)


def event(topic: str, data: Any, style: Style = PLAIN) -> str:
    """One event line: the topic, then its data as compact JSON (long data is clipped)."""
    text = json.dumps(data, ensure_ascii=False, default=str)
    if len(text) > 2000:
        text = text[:1997] + "..."
    return f"{style('[' + topic + ']', 'magenta')} {text}"
