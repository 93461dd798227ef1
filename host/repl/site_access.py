"""Site access at the REPL: which sites the extension may script, and how to grant another.

Chrome grants an extension access to a site only from a person's click (the side panel's grant
button) or in the manifest it loads with. A REPL has no click to give, so `tw.grant_site` checks
the access and, when it is missing, prints the exact way to get it: the side panel where there is
a window, else a launch with `--site-access` (which writes the site into the manifest of the
extension copy the browser loads), naming every site already granted so that none is lost.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from host.repl.errors import UsageError


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


def explain(answer: dict[str, Any]) -> str:
    """What `tw.grant_site` says: the site is covered already, or how to grant it."""
    origin = answer["origin"]
    if answer.get("granted"):
        return f"Tabwarden already has access to {origin}: page tools can run there."
    raise UsageError(
        f"Tabwarden has no access to {origin}, and the REPL cannot grant it: Chrome grants site access only from "
        "a person's click. With a window, open the side panel on that tab and grant it there. Headless (as "
        "`make launch` runs without a display), leave the REPL (Ctrl-D) and start again with it:\n"
        f"    {relaunch_line(list(answer.get('origins') or []), origin)}")
