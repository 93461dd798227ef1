"""The one path every tool call takes, whoever makes it (the agent loop, the REPL, a test):

    locate the target (and hold it, when its thread drives it already) → resolve it → judge
      (initial) → deny: end
      │ allow, held: judge again (dispatch; a read keeps its first judgement when nothing changed
      │      in between) → the caller marks it dispatching → run → audit
      │ otherwise: (let the target go) → ask: the caller asks the user → hold the target →
      │      resolve again (the same tab and origin, else target_changed) → judge again
      │      (dispatch, against what was approved) → the caller marks it dispatching → run →
      │      audit the outcome
    a navigation whose redirect to another site the guard held: judge the hop like a URL of
      its own, and follow it only when that is an allow (`hops.py`)
    a read (or a load) refused unsent because the tab shows another page than the one it was
      judged for: resolve again (asking the browser), judge again, run, once
    a read's outcome is audited once the answer has gone (`after_answer`); a write's before it

A call allowed at once on a tab its thread already drives is resolved a single time, under the
hold it runs under: nothing else acts on the tab between its resolution and its run, so a second
resolution would read the same. A tab not driven yet is held (its indicator shown, its guard put
in place for a write) only once the call is allowed, and the call is then resolved again under
the hold; so is a call that waited for the user.

Site access is part of the judgement: a call that must run inside a page the extension may
not script yet is at best an ask at first (the approval grants the access too), and refused at
dispatch if the access is still missing. A gatekeeper that cannot be trusted ends the call
before anything runs. New facts about a call (where it goes, where its values came from) enter
in `Authorizer.judge`, the only place a verdict is formed.

The caller supplies what differs between callers as `Steps`: how an approval is asked for and
waited on (the loop persists it; the REPL cannot ask, so it refuses), and what is made durable
before a call is sent. The path ends with an `Ending` the caller turns into its own words.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, Union

from protocol.permissions import FLAG_HOST_PERMISSION, Verdict

from host.calls import after_answer, hops
from host.calls.router import Router
from host.tools.call import ToolCall
from host.tools.failure import ToolCode, ToolFailure
from host.tools.quoting import quoted
from host.tools.result import ToolResult

if TYPE_CHECKING:
    from host.gatekeeper.decision import Decision

log = logging.getLogger("tabwarden.calls")

Phase = Literal["initial", "dispatch"]


@dataclass(frozen=True)
class Context:
    """Who makes the call: the thread, and for the audit the turn and the call's id."""

    thread_id: str
    turn_id: str | None = None
    call_id: str | None = None
    policy: str | None = None  # a per-turn override of the thread's policy


@dataclass(frozen=True)
class Judgement:
    """The judgement of one call at one phase: the gatekeeper's decision with site access folded
    in (`verdict` may be stricter than the decision's)."""

    decision: "Decision"
    verdict: Verdict
    flags: tuple[str, ...]
    reason: str

    @property
    def needs_site_access(self) -> bool:
        """True when the extension must be granted the call's origin."""
        return FLAG_HOST_PERMISSION in self.flags


@dataclass(frozen=True)
class Approved:
    """The user accepted: the approval's id and the authorisation revision to present at dispatch."""

    approval_id: str
    revision: str


# -- how a call ends ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Refused:
    """The call could not be resolved (or re-resolved) on its target; nothing was sent."""

    failure: ToolFailure
    phase: Phase
    call: ToolCall | None = None  # as it was last resolved


@dataclass(frozen=True)
class Unavailable:
    """The permission state cannot be trusted, so nothing ran."""

    reason: str
    phase: Phase
    call: ToolCall | None = None  # as it was last resolved
    storage: bool = False  # the database does not answer (it heals by itself; see gatekeeper.healing)


@dataclass(frozen=True)
class Denied:
    """The gatekeeper denied the call (at dispatch: what was approved is no longer allowed)."""

    judgement: Judgement
    phase: Phase
    call: ToolCall | None = None  # as it was last resolved


@dataclass(frozen=True)
class Changed:
    """At dispatch the call needs an approval again (the rules or grants changed meanwhile)."""

    judgement: Judgement
    call: ToolCall | None = None  # as it was last resolved


@dataclass(frozen=True)
class NoSiteAccess:
    """At dispatch the extension still may not script the call's origin."""

    origin: str
    call: ToolCall | None = None  # as it was last resolved


@dataclass(frozen=True)
class TargetChanged:
    """The target moved after the first check (another tab or origin): the approval does not carry over."""

    before: Any
    after: Any
    call: ToolCall | None = None  # as it was last resolved

    def failure(self) -> ToolFailure:
        """The failure the model reads; nothing was sent."""
        what = f"tab {self.before.tab_id}" if self.before.tab_id is not None else "the target"
        if self.before.tab_id == self.after.tab_id and self.before.origin == self.after.origin:
            change = (f"the element in {what} at {_origin(self.before.origin)} leads to {_leads(self.after)} now, "
                      f"not to {_leads(self.before)} as when it was checked")
        else:
            change = f"{what} at {_origin(self.before.origin)} moved to {_origin(self.after.origin)}"
        return ToolFailure(ToolCode.TARGET_CHANGED, f"{change} after the permission check; look at it again and do "
                           "not reuse the previous approval", phase="dispatch", retryable=True,
                           details={"dispatched": False})


@dataclass(frozen=True)
class Ran:
    """The call was sent; `result` says how it went."""

    result: ToolResult
    call: ToolCall | None = None  # as it was sent


@dataclass(frozen=True)
class Stopped:
    """The caller's `Steps` ended the call (the user declined, the approval timed out...); the
    caller audits it, having the answer."""

    outcome: str
    detail: Any = None


Ending = Union[Refused, Unavailable, Denied, Changed, NoSiteAccess, TargetChanged, Ran, Stopped]


class Steps(Protocol):
    """What a caller does at the points where callers differ."""

    async def approve(self, call: ToolCall, judgement: Judgement) -> Approved | Stopped:
        """The call needs the user's approval: ask (persist it, offer it) and wait for the answer."""
        ...

    def allowed(self, call: ToolCall) -> None:
        """The call passed its first check without an approval."""
        ...

    def dispatching(self, call: ToolCall, judgement: Judgement, approved: Approved | None) -> None:
        """The call passed its final check (`judgement`) and is about to be sent: make that durable
        now (a crash after this point must never replay a write). Raising stops the call unsent."""
        ...


def _moved_before_sent(call: ToolCall, result: ToolResult) -> bool:
    """A call that did not run because its tab showed another page than the one it was judged
    for: a read (the page tools check that before sending anything), or a call whose failure says
    so (`tabMoved`: a load checks the page it starts from)."""
    error = result.error
    if result.ok or error is None or error.code != ToolCode.TARGET_CHANGED:
        return False
    details = error.details or {}
    return details.get("dispatched") is False and (call.spec.effects == "read" or details.get("tabMoved") is True)


@dataclass
class Authorizer:
    """The path of every call of one host (see the module docstring)."""

    router: Router
    gatekeeper: Any
    # The provenance index of a thread (None for callers without a conversation, such as the
    # console): where the values the model was shown came from.
    provenance: Callable[[str], Any] | None = None

    async def process(self, call: ToolCall, ctx: Context, steps: Steps) -> Ending:
        """Take a decoded call through the whole path (see the module docstring)."""
        try:
            located = await self.router.locate(call)
        except ToolFailure as failure:
            return Refused(failure, "initial")
        held = self.router.holds_quietly(located)
        async with self.router.hold(located) if held else contextlib.nullcontext():
            try:
                call = await self.router.resolve(located)
            except ToolFailure as failure:
                return Refused(failure, "initial")
            changes = self._changes()
            first = self.judge(call, ctx, "initial")
            if not isinstance(first, Judgement):
                return first
            if first.verdict == "deny":
                self.audit(call, ctx, "denied")
                return Denied(first, "initial", call)
            if held and first.verdict == "allow" and call.tab_id == located.tab_id:
                steps.allowed(call)
                # A read judged a moment ago under the hold it runs under, with nothing awaited
                # since and no change to the rules, lists, locks or policy files counted meanwhile,
                # would be judged the same again (grants and thread policies change only on this
                # thread, between awaits; a read's repeated judgement is not audited): the first
                # stands for dispatch.
                same = call.spec.effects == "read" and changes is not None and changes == self._changes()
                return await self._final(call, ctx, steps, None, judged=first if same else None)
        approved: Approved | None = None
        if first.verdict == "ask":
            answer = await steps.approve(call, first)
            if isinstance(answer, Stopped):
                return answer
            approved = answer
        else:  # allowed, but not resolved under the hold it runs under: held and resolved again
            steps.allowed(call)
        return await self.dispatch(call, ctx, steps, approved)

    async def dispatch(self, call: ToolCall, ctx: Context, steps: Steps, approved: Approved | None) -> Ending:
        """The second half of a call that let its target go: hold the target, resolve it again,
        judge again, mark, run, audit. The loop enters here directly when it resumes an approved
        call after a restart."""
        async with self.router.hold(call):
            try:
                fresh = await self.router.resolve(call)
            except ToolFailure as failure:
                self.audit(call, ctx, f"refused:{failure.code}")
                return Refused(failure, "dispatch", call)
            if call.target is not None and fresh.target is not None and not call.target.same_place(fresh.target):
                self.audit(call, ctx, f"refused:{ToolCode.TARGET_CHANGED}")
                return TargetChanged(call.target, fresh.target, fresh)
            return await self._final(fresh, ctx, steps, approved)

    async def _final(self, call: ToolCall, ctx: Context, steps: Steps, approved: Approved | None, *,
                     again: bool = True, judged: Judgement | None = None) -> Ending:
        """Under the hold, on the call as last resolved: judge (dispatch), mark, run, audit.
        `again`: a read whose tab moved before it was sent may be resolved and judged anew.
        `judged`: the dispatch judgement already made (see `process`)."""
        final = judged if judged is not None else self.judge(call, ctx, "dispatch", approved)
        if not isinstance(final, Judgement):
            self.audit(call, ctx, f"refused:{ToolCode.GATEKEEPER_UNAVAILABLE}")
            return final
        if final.verdict == "deny":
            self.audit(call, ctx, f"refused:{ToolCode.DENIED}")
            return Denied(final, "dispatch", call)
        if final.decision.verdict == "ask":
            self.audit(call, ctx, f"refused:{ToolCode.AUTHORIZATION_CHANGED}")
            return Changed(final, call)
        if final.needs_site_access:
            self.audit(call, ctx, f"refused:{ToolCode.NO_SITE_ACCESS}")
            return NoSiteAccess(call.origin, call)
        steps.dispatching(call, final, approved)
        result = await self.router.run(call)
        outcome = "ok" if result.ok else f"failed:{result.code}"
        if call.spec.effects == "read":  # its decision was recorded before it ran: the answer need not wait
            after_answer.later(lambda: self.audit(call, ctx, outcome))
        else:
            self.audit(call, ctx, outcome)
        if again and approved is None and _moved_before_sent(call, result):
            # The tab left the page it was judged for (the user navigated it; the host's record
            # of it was behind) and nothing was sent: where it is now is judged like a new call.
            try:
                fresh = await self.router.resolve(call)
            except ToolFailure as failure:
                self.audit(call, ctx, f"refused:{failure.code}")
                return Refused(failure, "dispatch", call)
            if fresh.tab_id == call.tab_id:  # the tab it holds; a call routed elsewhere now is the model's to make
                return await self._final(fresh, ctx, steps, None, again=False)
        if hops.held_hop(call, result):
            result = await hops.follow(self, call, ctx, result)
        return Ran(result, call)

    def _changes(self) -> int | None:
        """The gatekeeper's count of changes to what decides a verdict (None when it keeps none)."""
        changes = getattr(self.gatekeeper, "changes", None)
        return changes if isinstance(changes, int) else None

    def judge(self, call: ToolCall, ctx: Context, phase: Phase,
              approved: Approved | None = None, *, direct: bool | None = None) -> Judgement | Unavailable:
        """The verdict on a resolved call: the gatekeeper's decision, then site access (a page the
        extension may not script makes anything but a deny an ask, flagged so the approval asks
        for the access too). `direct` False judges a call no caller issued (a redirect hop) as
        the model's, even for a caller without a conversation."""
        from host.gatekeeper.errors import GatekeeperUnavailable
        from host.gatekeeper.service import CheckRequest

        target = call.target
        try:
            known = self.provenance(ctx.thread_id) if self.provenance is not None else None
        except Exception as exc:  # the thread's messages cannot be read: fail closed
            log.warning("the provenance of thread %s cannot be read", ctx.thread_id, exc_info=True)
            return Unavailable(f"the thread's history cannot be read: {exc}", phase, call)
        try:
            decision = self.gatekeeper.check(CheckRequest(
                thread_id=ctx.thread_id, tool=call.tool, params=call.wire_params(), origin=call.origin,
                turn_id=ctx.turn_id, call_id=ctx.call_id, policy=ctx.policy,
                target=target.facts if target is not None else None, phase=phase,
                approved_revision=approved.revision if approved else None,
                approval_id=approved.approval_id if approved else None, provenance=known,
                direct=self.provenance is None if direct is None else direct))
        except GatekeeperUnavailable as exc:
            from host.gatekeeper.healing import is_storage_error

            return Unavailable(str(exc), phase, call, storage=is_storage_error(exc))
        verdict, flags, reason = decision.verdict, tuple(decision.flags), decision.reason
        if target is not None and target.site_access is False and verdict != "deny":
            verdict = "ask"
            flags = (*flags, FLAG_HOST_PERMISSION)
            reason = no_site_access(call.origin)
        return Judgement(decision, verdict, flags, reason)  # type: ignore[arg-type]

    def audit(self, call: ToolCall, ctx: Context, outcome: str) -> None:
        """Record how the call ended; a failure to audit is logged, never raised (the decision
        itself was audited when it was made)."""
        try:
            self.gatekeeper.record_outcome(thread_id=ctx.thread_id, tool=call.tool, outcome=outcome,
                                           target_origin=call.origin, turn_id=ctx.turn_id, call_id=ctx.call_id)
        except Exception:
            log.warning("the outcome of %s could not be audited", ctx.call_id or call.tool, exc_info=True)


def commit_of(decision: Any) -> tuple[str, str]:
    """What an asked call commits, for the card: (effect class, the same in plain words), or
    ("", "") for an ordinary step."""
    from host.gatekeeper.facts.consequence import EFFECT_WORDS, STEP

    effect = str(getattr(decision, "effect", "") or "")
    if not effect or effect == STEP:
        return "", ""
    return effect, EFFECT_WORDS.get(effect, effect)


def no_site_access(origin: str) -> str:
    """Why a call waits for site access, as the user and the model read it."""
    return (f"Tabwarden has no access to {_origin(origin, 'this page')} yet; the user must grant it (the approval card "
            "asks for it) before page tools can run there.")


def _leads(target: Any) -> str:
    urls = [quoted(lead.get("url")) if isinstance(lead, dict) and lead.get("url") else "an unknown place"
            for lead in target.leads()]
    return ", ".join(urls) or "nowhere else"


def _origin(origin: str, missing: str = "no page") -> str:
    # A site picks its own host name (and a tab's origin may be an odd scheme's): quoted as data.
    return quoted(origin) if origin else missing
