"""A redirect of the agent's own navigation to another site, judged like a URL of its own.

While `navigate` or `tab_open` loads its URL, the navigation guard holds any hop to a site other
than the URL's (`NavigationGuard.hold_hops`); the call then ends `redirect_held` with the hop's
URL, nothing sent there. The hop is judged here, in the call's own path and thread, with the
thread's provenance, as if the model had asked to navigate there:

    held hop → judge navigate(hop) (initial) → allow: run it (it may be held again, up to
      │                                         MAX_HOPS) → the result says where it came from
      │ ask or deny → the call fails `redirect_held`, saying where the page tried to go and why
      │               it was not followed (an ask cannot be shown in the middle of a navigation:
      │               the model may navigate there itself, which asks the user as any call does)

So an open redirect on an allowed site that carries the user's values to a site nobody named
asks, and one that leads somewhere harmless is followed without a question.
"""

from __future__ import annotations

from typing import Any

import msgspec

from host.tools.call import ToolCall
from host.tools.failure import ToolCode, ToolFailure
from host.tools.quoting import quoted
from host.tools.result import ToolResult, failure

MAX_HOPS = 5
FOLLOWED_TOOLS = frozenset({"navigate", "tab_open"})


def held_hop(call: ToolCall, result: ToolResult) -> str:
    """The URL of the hop the guard held during `call` ("" when none)."""
    if result.ok or call.tool not in FOLLOWED_TOOLS or result.code != ToolCode.REDIRECT_HELD:
        return ""
    hop = result.details.get("hopUrl") if isinstance(result.details, dict) else None
    return hop if isinstance(hop, str) else ""


async def follow(authorizer: Any, call: ToolCall, ctx: Any, result: ToolResult) -> ToolResult:
    """`result` with every held hop judged and, where allowed, followed (see the module docstring).
    `authorizer` is the call's `Authorizer` and `ctx` its `Context`; runs under the hold of the
    call's tab."""
    from host.tools.browser_params import NavigateParams
    from host.tools.catalog import lookup

    spec = lookup("navigate")
    trail: list[str] = []
    for _ in range(MAX_HOPS):
        hop = held_hop(call, result)
        if not hop:
            return _with_trail(result, trail)
        tab = result.tab_id if result.tab_id is not None else call.tab_id
        step = ToolCall(spec=spec, params=NavigateParams(url=hop, tab_id=tab), thread_id=call.thread_id)  # type: ignore[arg-type]
        try:
            step = await authorizer.router.resolve(await authorizer.router.locate(step))
        except ToolFailure as problem:
            return _not_followed(result, hop, problem.message)
        judged = authorizer.judge(step, ctx, "initial", direct=False)
        verdict = getattr(judged, "verdict", "deny")
        if verdict != "allow" or judged.needs_site_access:  # type: ignore[union-attr]
            authorizer.audit(step, ctx, f"refused:{ToolCode.REDIRECT_HELD}")
            reason = getattr(judged, "reason", "") or "the permission state cannot be read"
            return _not_followed(result, hop, reason, asks=verdict == "ask")
        trail.append(hop)
        result = await authorizer.router.run(step)
        authorizer.audit(step, ctx, "ok" if result.ok else f"failed:{result.code}")
        call = step
    return _not_followed(result, held_hop(call, result) or trail[-1], f"more than {MAX_HOPS} redirects to other sites")


def _not_followed(result: ToolResult, hop: str, why: str, *, asks: bool = False) -> ToolResult:
    """The call's failure: where the page tried to go, and why the hop was not followed."""
    what = ("it needs the user's approval" if asks else "this task may not go there") + f" ({why})"
    message = (f"the page redirected to {quoted(hop, 300)} on another site, and the redirect was not followed: {what}. "
               "Nothing was sent there. To go there anyway, navigate to that address yourself (it is judged, and may "
               "ask the user).")
    details: dict[str, Any] = {**(result.details if isinstance(result.details, dict) else {}), "hopUrl": hop,
                               "dispatched": True}
    problem = ToolFailure(ToolCode.REDIRECT_HELD, message, phase="settle", details=details)
    return failure(result.tool, problem, tab_id=result.tab_id)


def _with_trail(result: ToolResult, trail: list[str]) -> ToolResult:
    if not trail:
        return result
    hops = " → ".join(quoted(hop, 200) for hop in trail)
    note = f"(The page redirected to another site; each hop was judged as a navigation of its own: {hops}.)"
    return msgspec.structs.replace(result, text=f"{note}\n{result.text}")
