"""Which writes on a guarded origin need no question under `auto`, once every value they carry
was judged by provenance (step `untrusted_value`): the ones that neither send, commit nor
remove anything by themselves.

    quiet:  a fill without submit (a draft: what it says was judged, and sending it is a click
            that asks); a click, hover or key on an element the host knows and whose name is
            no commit word (opening a message, a folder, a tab); navigation inside the site
    asks:   a click or key on an element named send, share, delete, pay, save, invite, ...;
            an element the host does not know (no ref hints, click_xy); Enter and its
            combinations; a submit flag; drags, uploads, script and everything else

Element names come from the page, so a page can only make the gatekeeper ask *more* by naming
its own buttons: an app's first-party buttons (Send, Delete) keep their names whatever the
content shows, and an unnamed element asks.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

COMMIT_WORDS = (
    r"\b(send|sent|submit|share|sharing|invite|add|delete|remove|trash|bin|discard|erase|empty|clear|reset|"
    r"forward|reply|post|publish|pay|payment|transfer|confirm|book|reserve|purchase|buy|order|checkout|"
    r"check out|save|create|schedule|grant|allow|accept|approve|sign|upload|move|rename|revoke|leave|block|"
    r"unsubscribe|update|change|apply|yes|ok|done|finish|continue|next|join|kick|ban|archive|restore|"
    r"install|authorize|authorise|permit|connect|disconnect|enable|disable|mark|set)\b")
_QUIET_NAVIGATION = frozenset({"navigate", "go_back", "go_forward", "tab_focus", "tab_open", "tab_close"})
_QUIET_KEYS = frozenset({"tab", "shift+tab", "escape", "arrowup", "arrowdown", "arrowleft", "arrowright", "pageup",
                         "pagedown", "home", "end"})


@functools.cache
def _commit_words() -> re.Pattern[str]:
    return re.compile(COMMIT_WORDS, re.I)  # compiled on first use: host start-up stays short


def quiet_on_guarded(tool: str, category: str | None, params: Mapping[str, Any],
                     target: Mapping[str, Any] | None) -> str | None:
    """Why this write on a guarded origin needs no question under `auto` (for the trace), or
    None when it still asks."""
    if tool in _QUIET_NAVIGATION:
        return "moving between pages sends nothing (where it goes was judged)"
    if category == "fill" and tool != "press_key" and tool != "batch_actions":
        if params.get("submit"):
            return None
        return "a fill without submit is a draft; its values were judged and sending it asks"
    if tool == "batch_actions":
        actions = params.get("actions")
        if not isinstance(actions, list) or any(
                not isinstance(a, Mapping) or a.get("action") not in ("type", "select") or a.get("submit")
                for a in actions):
            return None
        return "fills without submit are a draft; their values were judged and sending it asks"
    if tool == "press_key":
        key = str(params.get("key") or "").lower().replace(" ", "")
        return "the key only moves the focus or the view" if key in _QUIET_KEYS else None
    if category in ("click", "interact") and tool != "drag" and tool != "click_xy":
        names = _element_names(target)
        if names is None:
            return None
        committing = [n for n in names if _commit_words().search(n)]
        return None if committing else "the element opens or shows something; it is not named for sending or removing"
    return None


def _element_names(target: Mapping[str, Any] | None) -> list[str] | None:
    """The names, labels and placeholders of the acted-on elements (None when the host knows
    none of them: an unknown element asks)."""
    hints = (target or {}).get("hints") if isinstance(target, Mapping) else None
    if not isinstance(hints, list) or not hints:
        return None
    names = []
    for hint in hints:
        if not isinstance(hint, Mapping):
            return None
        words = [str(hint.get(k) or "") for k in ("name", "label", "placeholder")]
        if not any(words) or str(hint.get("role") or "") in ("", "generic"):
            return None
        if str(hint.get("role")) in ("checkbox", "switch", "menuitemcheckbox", "radio", "combobox", "option"):
            return None  # toggles and choices change settings whatever their name says
        names.append(" ".join(w for w in words if w))
    return names
