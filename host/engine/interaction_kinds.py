"""What each interaction tool asks for and how its answer reads to the model.

    ask_user             a question (optional choices)          → the user's answer
    request_user_action  something only a person may do         → "the user reports it done" (nothing more)
    watch_page           a page condition on one tab            → the condition held / did not
    schedule_resume      continue after a delay                 → resumed (on time, late, or early)

Each `Kind` below is the runner its tool's declaration names. The request is what is persisted
and shown to the user (`interaction.request`); the deadline is persisted with it. Answers are
`{"kind": "submit"|"cancel"|"timeout", ...}` with who gave them (`user`, `timeout`,
`interrupt`, `recovery`, or `watch` for the page watcher).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

import msgspec

if TYPE_CHECKING:
    from host.engine.waits import Settled
    from host.tools.call import ToolCall


@dataclass(frozen=True)
class Reading:
    """How an answer reads in the tool result."""

    ok: bool
    text: str
    trust: str = "trusted"
    provenance: str = "user"


def _duration(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    return f"{seconds / 3600:.1f} h"


def _clock(epoch: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(epoch))


# ---------------------------------------------------------------- ask_user


def _ask_user(answered: "Settled", request: dict[str, Any], waited: float) -> Reading:
    if answered.kind == "submit":
        value = answered.answer.get("value")
        shown = value if isinstance(value, str) else msgspec.json.encode(value).decode()
        return Reading(True, f"The user answered: {shown}")
    if answered.kind == "cancel":
        note = answered.answer.get("note")
        return Reading(False, "The user did not answer the question." + (f" They said: {note}" if note else "") +
                       " Continue without the answer, or stop and explain.")
    return Reading(False, "No answer came in time. Continue without it, or stop and explain what you need.")


# ---------------------------------------------------------------- request_user_action


def _user_action(answered: "Settled", request: dict[str, Any], waited: float) -> Reading:
    # Whatever the user typed is never passed on: the model learns only that it was done or not.
    action = str(request.get("action", ""))
    if answered.kind == "submit":
        return Reading(True, f"The user reports it done: {action}. Look at the page again before you continue.")
    if answered.kind == "cancel":
        return Reading(False, f"The user did not do it: {action}. Continue without it, or stop and explain.")
    return Reading(False, f"The user did not report back within {_duration(waited)}: {action}. Stop and explain "
                          "what is still needed.")


# ---------------------------------------------------------------- schedule_resume


def _resume(answered: "Settled", request: dict[str, Any], waited: float) -> Reading:
    if answered.kind == "timeout":
        if answered.by == "recovery":
            return Reading(True, f"Resumed late, at {_clock(time.time())}: Tabwarden was not running at the "
                                 "scheduled time. Continue the task.", provenance="tool")
        return Reading(True, f"Resumed as scheduled, after {_duration(waited)}. Continue the task.", provenance="tool")
    if answered.kind == "submit":
        return Reading(True, f"The user resumed the task early, after {_duration(waited)}. Continue the task.")
    return Reading(False, "The user cancelled the scheduled resume. Stop here and say where the task stands.")


# ---------------------------------------------------------------- watch_page


def describe_condition(request: dict[str, Any]) -> str:
    """The watched condition in words: `"Done" appears and the URL matches …`."""
    parts = []
    if request.get("textAppears"):
        parts.append(f"{msgspec.json.encode(request['textAppears']).decode()} appears")
    if request.get("textGone"):
        parts.append(f"{msgspec.json.encode(request['textGone']).decode()} disappears")
    if request.get("urlMatches"):
        parts.append(f"the URL matches {msgspec.json.encode(request['urlMatches']).decode()}")
    return " and ".join(parts) or "nothing"


def _watch(answered: "Settled", request: dict[str, Any], waited: float) -> Reading:
    where = f"tab {request.get('tabId')}"
    condition = describe_condition(request)
    if answered.kind == "submit" and answered.by == "watch":
        value = answered.answer.get("value") or {}
        url = str(value.get("url") or "")
        return Reading(True, f"The condition held after {_duration(waited)}: {condition} on {where}"
                             + (f" (now at {url})" if url else "") + ".",
                       trust="untrusted", provenance="page")
    if answered.kind == "submit":
        return Reading(True, f"The user ended the wait on {where} early; look at the page yourself.")
    if answered.kind == "cancel" and answered.by == "watch":
        return Reading(False, f"The watch on {where} stopped: {answered.answer.get('note') or 'unknown reason'}.",
                       provenance="tool")
    if answered.kind == "cancel":
        return Reading(False, f"The user stopped the watch on {where}.")
    return Reading(False, f"The condition did not hold within {_duration(waited)}: {condition} on {where}.",
                   provenance="tool")


# ---------------------------------------------------------------- the table


def _watch_summary(call: "ToolCall", now: float) -> str:
    request = msgspec.to_builtins(call.params)
    return (f"Waiting until {describe_condition(request)} on tab {call.tab_id} ({call.origin}), for at most "
            f"{_duration(call.params.timeout_seconds)}")


def _resume_summary(call: "ToolCall", now: float) -> str:
    return f"Continues at {_clock(now + call.params.delay_seconds)}: {call.params.reason}"


@dataclass(frozen=True)
class Kind:
    """How one interaction tool waits: for how long, what it shows, how its answer reads, and
    whether a watcher settles it."""

    timeout: Callable[[Any, float], float]  # (typed params, default seconds) -> seconds to wait
    read: Callable[["Settled", dict[str, Any], float], Reading]
    # A one-line description for pages and the REPL.
    summary: Callable[["ToolCall", float], str] | None = None
    watched: bool = False  # a watcher settles it (watch_page)

    def request(self, call: "ToolCall", now: float) -> dict[str, Any]:
        """What is persisted and shown to the user: the parameters, the tab a targeted call
        waits on, and the summary."""
        request: dict[str, Any] = {"kind": call.tool, **msgspec.to_builtins(call.params)}
        if call.spec.target != "none":
            request["tabId"] = call.tab_id
            request["origin"] = call.origin
        if self.summary is not None:
            request["summary"] = self.summary(call, now)
        return request


# The runners the catalog names (`host.engine.interaction_kinds:<tool>`).
ask_user = Kind(lambda p, default: default, _ask_user)
request_user_action = Kind(lambda p, default: float(p.timeout_seconds) if p.timeout_seconds else default, _user_action)
schedule_resume = Kind(lambda p, default: float(p.delay_seconds), _resume, summary=_resume_summary)
watch_page = Kind(lambda p, default: float(p.timeout_seconds), _watch, summary=_watch_summary, watched=True)
