"""Text for people: snapshots, snapshot diffs, tool results, gatekeeper decisions, tables,
audit rows and events. Pure functions from the host's JSON to strings (colour optional)."""

from __future__ import annotations

import json
import re
import time
from typing import Any, Iterable, Sequence

from protocol.permissions import describe_policy

from host.browser.diff import CONTEXT_MARK
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
    """A snapshot diff: added lines marked `+`, removed lines `-`, current refs as they are."""
    out, section = [], ""
    for line in text.split("\n"):
        if line.startswith(DIFF_HEADER):
            out.append(style(line, "bold"))
            continue
        if line in ("Added/changed:", "Removed:", "Current interactive refs:") or line.startswith("Order changed"):
            section = line if not line.startswith("Order changed") else "Order changed"
            out.append(style(line, "bold"))
            continue
        if not line.strip():
            out.append(line)
        elif line.endswith(CONTEXT_MARK) or section == "Order changed":  # context, or lines that only moved
            out.append(snapshot(line, style))
        elif section == "Added/changed:":
            out.append(style("+ " + line, "green"))
        elif section == "Removed:":
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


# Failures about which tab a call acts on, and what to do about them at the REPL.
TAB_CODES = frozenset({"not_web_page", "tab_closed", "no_target"})
TAB_HINT = "tw.tabs() lists the open tabs with their ids; pass tab=<id>, or tw.use(<id>) to make one the default"


def tool_result(result: dict[str, Any], style: Style = PLAIN) -> str:
    """A ToolResult: a status line (tool, tab, verdict or error code), then its text."""
    tool = result.get("tool", "?")
    tab = result.get("tabId")
    where = f" [tab {tab}]" if tab is not None else ""
    details = result.get("details") or {}
    decision = details.get("decision")
    if result.get("ok"):
        head = f"{style('ok', 'green', 'bold')} {tool}{where}"
        if isinstance(decision, dict):
            head += f"  gatekeeper {verdict(decision.get('verdict', '?'), style)} ({decision.get('code')})"
        return head + "\n" + page_text(_without_prefix(result.get("text", ""), tab), style)
    error = result.get("error") or {}
    code = error.get("code", "error")
    head = f"{style('failed', 'red', 'bold')} {tool}{where}: {style(code, 'red')}"
    if error.get("phase"):
        head += f" (phase {error['phase']})"
    lines = [head, f"  {error.get('message', result.get('text', ''))}"]
    if details.get("verdict"):
        lines.append(f"  gatekeeper {verdict(details['verdict'], style)} ({details.get('reasonCode')}): "
                     f"{details.get('reason', '')}")
        if details.get("rule"):
            lines.append(f"  rule: {details['rule']}")
        if details.get("flags"):
            lines.append(f"  flags: {', '.join(details['flags'])}")
    if code in TAB_CODES:
        lines.append(f"  {TAB_HINT}")
    return "\n".join(lines)


def _without_prefix(text: str, tab: Any) -> str:
    prefix = f"[tabId={tab}] "
    return text[len(prefix):] if tab is not None and text.startswith(prefix) else text


def decision(d: dict[str, Any], style: Style = PLAIN) -> str:
    """A gatekeeper decision with every step of its trace."""
    where = d.get("target_origin") or "(no origin)"
    lines = [f"{d.get('tool', '?')} @ {where} -> {verdict(d.get('verdict', '?'), style)} ({d.get('code')})"
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
    """A local time of day for a timestamp."""
    return time.strftime("%H:%M:%S", time.localtime(at)) if at else "-"


def audit_rows(rows: Iterable[dict[str, Any]], style: Style = PLAIN) -> str:
    """One line per audit row: seq, time, kind, thread, tool @ origin, then what happened."""
    lines = []
    for row in rows:
        outcome = ""
        if row.get("verdict"):
            outcome = f"{verdict(row['verdict'], style)} ({row.get('code')})"
        elif row.get("approval_decision"):
            outcome = f"approval {row['approval_decision']}"
        elif row.get("tool_outcome"):
            outcome = f"outcome {row['tool_outcome']}"
        elif row.get("detail"):
            outcome = row["detail"]
        where = row.get("target_origin") or "(no origin)"
        lines.append(f"#{row.get('seq')} {clock(row.get('at'))} {row.get('kind', ''):<8} {row.get('thread_id', '')}: "
                     f"{row.get('tool') or '-'} @ {where}  {outcome}")
    return "\n".join(lines) if lines else style("(no audit rows)", "dim")


def event(topic: str, data: Any, style: Style = PLAIN) -> str:
    """One event line: the topic, then its data as compact JSON (long data is clipped)."""
    text = json.dumps(data, ensure_ascii=False, default=str)
    if len(text) > 2000:
        text = text[:1997] + "..."
    return f"{style('[' + topic + ']', 'magenta')} {text}"
