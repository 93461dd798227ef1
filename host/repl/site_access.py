"""Site access at the REPL: which sites the extension may script, granting another and taking
one back.

Chrome grants an extension access to a site only from a person's click (the side panel's grant
button) or in the manifest it loads with. A REPL has no click to give; a headless launch loads a
copy of the extension of its own, so `tw.grant_site` has the host add the site to that copy's
manifest and the extension reload to take it (`browser.grant_site`). The reload restarts the
host as well: the REPL then attaches to the new one, and says what was granted. Where the browser
loaded no such copy, it prints the exact way to get the access: the side panel where there is a
window, else a launch with `--site-access`, naming every site already granted.
"""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import urlsplit

from host.repl.errors import UsageError
from host.transport.errors import RequestError

RESTART_TIMEOUT_S = 30.0


def site_origin(site: str) -> str:
    """`https://example.com` from what a person types for a site (a URL, an origin, or a bare
    host name, taken as https); UsageError for anything else."""
    text = site.strip()
    if "://" not in text:
        text = "https://" + text
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname or any(c in parts.netloc for c in "*@ "):
        raise UsageError(f"{site!r} is not a web site: pass one such as 'https://example.com'")
    return f"{parts.scheme}://{parts.netloc.lower()}"


def relaunch_line(granted: list[str], origin: str) -> str:
    """The `make launch` line that starts the browser with `origin` and every site granted now."""
    sites = [p for p in granted if p != f"{origin}/*"] + [origin]
    return "make launch LAUNCH_ARGS=\"" + " ".join(f"--site-access {_shell(s)}" for s in sites) + "\""


def _shell(pattern: str) -> str:
    return pattern if not any(c in pattern for c in "*<>") else f"'{pattern}'"


def explain(answer: dict[str, Any], why: str = "") -> str:
    """What `tw.grant_site` says when it grants nothing: the site is covered already, or (raised)
    how to grant it, with `why` the host could not."""
    origin = answer["origin"]
    if answer.get("granted"):
        return f"Tabwarden already has access to {origin}: page tools can run there."
    raise UsageError(
        f"Tabwarden has no access to {origin}, and the REPL cannot grant it here ({why or 'the host refused'}). "
        "Chrome grants site access only from a person's click or at launch. With a window, open the side panel "
        "on that tab and grant it there. Headless, leave the REPL (Ctrl-D) and start again with it:\n"
        f"    {relaunch_line(list(answer.get('origins') or []), origin)}")


def granted_line(answer: dict[str, Any], pid: int) -> str:
    """What `tw.grant_site` prints once the host granted the site."""
    line = f"Granted Tabwarden access to {answer['origin']} ({answer['pattern']}): page tools can run there."
    if answer.get("restarting"):
        line += (f" The extension reloaded to take it, and the host restarted with it: now attached to host pid "
                 f"{pid}. Its threads, rules and approvals carried over; background events of the old host's "
                 "`tw.watch` stopped.")
    return line


def revoked_line(answer: dict[str, Any], pid: int) -> str:
    """What `tw.revoke_site` prints."""
    if not answer.get("revoked"):
        return f"Tabwarden had no access to {answer['origin']}: nothing to take back."
    line = f"Took back Tabwarden's access to {answer['origin']} ({answer['pattern']})."
    if answer.get("restarting"):
        line += f" The extension reloaded without it; now attached to host pid {pid}."
    return line


async def reattach(old: Any, origin: str, expect_granted: bool | None, connect: Any) -> Any:
    """After the extension reloaded: wait for its host to end, attach to the new one (`connect()`
    gives a client, raising while there is none yet) and wait until it answers (and, unless
    `expect_granted` is None, reports `origin` as granted or not, as expected). Returns the new
    client; UsageError when it does not come."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + RESTART_TIMEOUT_S
    try:
        await asyncio.wait_for(old.endpoint.closed.wait(), RESTART_TIMEOUT_S)
    except asyncio.TimeoutError:
        raise UsageError("the extension did not reload (its host is still the same): see the browser's log") from None
    await old.close()
    client, problem = None, "no new host started"
    while loop.time() < deadline:
        try:
            if client is None:
                client = await connect()
            answer = await client.call("browser.site_access", origin=origin)
            if expect_granted is None or bool(answer.get("granted")) == expect_granted:
                return client
            problem = f"the new host reports access to {origin} as {answer.get('granted')}"
        except (RequestError, OSError) as exc:
            problem = str(exc)
            if client is not None and client.endpoint.closed.is_set():
                client = None
        await asyncio.sleep(0.25)
    raise UsageError(f"the extension reloaded but the new host is not ready after {RESTART_TIMEOUT_S:g} s: {problem}")
