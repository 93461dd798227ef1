"""What a write commits: `effect_of(tool, params, target)` gives every write an effect class,
from facts the host holds about the element and the page, never from the model's words.

    commits  pay       pay, purchase, order, subscribe, donate, transfer
             send      send, post, publish, reply, comment, invite, share, like, star, follow
             delete    delete, remove, deactivate, cancel, close an account, unsubscribe, revoke
             security  a change of password, e-mail, phone, two-factor or recovery
             access    a grant of access or permissions, a new key, a public link, a new payee
             submit    a form carrying personal, payment or credential fields; an unknown or
                       unnamed submit control (which leans to commit)
             upload    a file sent to the site
             install   an app, extension or integration installed or connected
             unknown   an action whose element the host cannot see (a click at a point, script)
    step     open, expand, navigate, search, filter, sort, choose, type without submitting, add to
             cart, save a draft, sign in

How an element that is activated (a click, Enter or Space on it) is read, first hit wins:
   0 a text field is a step (a click places the caret)
   1 a toggle (checkbox, switch, radio, option, tab) is a step unless its name names a change of
     security or access ("Two-step verification", "Anyone with the link")
   2 a link that goes to another document commits only what its URL does when opened
     (unsubscribe, delete): "Buy It Now" or "Cancel membership" as links open the page that asks
   3 its name, label or placeholder: the longest phrase of the word data decides ("Add to cart"
     is a step although "add" starts many commits; "Cancel order" deletes although "Cancel" alone
     closes a dialog; removing on a cart page is a step); a name longer than 256 characters is not
     read (structure decides)
   4 a generic confirmation ("OK", "Confirm", "Save") takes its effect from the context: the
     fields its form carries, the nearest heading, the page title, the form's destination; with
     none, a submit control leans to `submit` and any other control is a step
   5 a forward word ("Continue", "Next", "Review") is a step, unless the heading or title shows
     the final review of a payment ("Review your order") or it submits a form that carries a card
     number or a new password
   6 an unnamed or unmatched submit control: the context, or `submit`; a GET form is a search
Enter in a text field (or `type` with submit) sends its form: a search field is a step, a message
field sends, then the context decides as in 3; Enter with nothing known of the focus leans to
`submit`. Names come from the page, so a page can make the model of a *legitimate* site's
commits (its own Send and Delete) but a hostile page can name a commit as a step: values and
destinations are judged by provenance and the destination guard, whatever the class.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple
from urllib.parse import parse_qsl, urlsplit

from host.gatekeeper.facts.commit_vocabulary import normalize, vocabulary
from host.tools.quoting import quoted

STEP = "step"
COMMIT_EFFECTS = ("pay", "send", "delete", "security", "access", "submit", "upload", "install", "unknown")
EFFECTS = (*COMMIT_EFFECTS, STEP)
# Plain words for a card and a reason.
EFFECT_WORDS = {
    "pay": "a payment or purchase", "send": "sending or publishing something", "delete": "a deletion or cancellation",
    "security": "a change of account security", "access": "a grant of access", "submit": "a form submission",
    "upload": "an upload of a file", "install": "an install or connection", "unknown": "an action the host cannot see",
    STEP: "an ordinary step",
}
MAX_NAME = 256
_TOGGLES = frozenset({"checkbox", "switch", "radio", "option", "menuitemcheckbox", "menuitemradio", "tab", "treeitem",
                      "combobox", "listbox", "slider", "spinbutton", "gridcell", "row"})
_TOGGLE_COMMITS = frozenset({"security", "access"})
_FIELD_ROLES = frozenset({"textbox", "searchbox", "combobox", "spinbutton"})
_NAVIGATION = frozenset({"go_back", "go_forward", "tab_focus", "tab_close", "tabs_group", "tab_group_update",
                         "session_restore", "scroll", "wait_for", "hover", "select_option", "drag"})
_QUIET_BUILTINS = frozenset({"fetch_url", "download", "memory_write", "artifact"})
_ENTER = frozenset({"enter", "control+enter", "ctrl+enter", "meta+enter", "shift+enter", "numpadenter"})
_PAY_FIELDS = ("cc-", "transaction-amount", "transaction-currency")
_PERSONAL_FIELDS = frozenset({
    "email", "tel", "name", "given-name", "family-name", "additional-name", "honorific-prefix", "street-address",
    "address-line1", "address-line2", "address-line3", "address-level1", "address-level2", "postal-code", "bday",
    "bday-day", "bday-month", "bday-year", "sex", "organization", "tel-national", "username",
})
# Query keys whose value names what a GET link does (`?action=delete`).
_ACTION_KEYS = frozenset({"action", "do", "op", "cmd", "command", "mode", "method", "task"})
_MCP_READS = re.compile(r"^(get|list|search|read|find|fetch|query|describe|view|show|lookup|count|check|browse|"
                        r"inspect|status|info|explain|resolve|validate|preview|download|export)\b")


class Effect(NamedTuple):
    """A write's effect class and the facts that decided it (shown in the trace)."""

    effect: str
    facts: tuple[str, ...]

    @property
    def commits(self) -> bool:
        """True for every class but `step`."""
        return self.effect != STEP

    def describe(self) -> str:
        """`effect (fact; fact)`, as a trace step shows it."""
        return f"{self.effect} ({'; '.join(self.facts)})" if self.facts else self.effect


class _Element(NamedTuple):
    role: str
    text: str  # the normalised name (or label, or placeholder); "" when unnamed or unread
    shown: str  # the name as the page gave it, for the facts
    long: bool
    tag: str
    input_type: str
    autocomplete: str
    field_name: str
    submits: bool
    form_fields: tuple[str, ...]
    heading: str
    url: str
    method: str


def effect_of(tool: str, params: Mapping[str, Any] | None, target: Mapping[str, Any] | None,
              category: str | None = None) -> Effect:
    """The effect class of a write (see the module docstring for the order)."""
    params = params if isinstance(params, dict) else {}
    target = target if isinstance(target, dict) else {}
    title = normalize(str(target.get("title") or ""), 300)
    if tool.startswith("mcp__"):
        return _mcp(tool)
    if tool == "upload_file" or category == "upload":
        return Effect("upload", ("the call uploads a file",))
    if tool in ("navigate", "tab_open"):
        return _opened(str(params.get("url") or ""), "the destination")
    if tool == "run_javascript" or category == "eval":
        return Effect("unknown", ("script in the page can do anything",))
    if tool in _NAVIGATION or tool in _QUIET_BUILTINS or category in ("navigate", "organize", "memory", "download"):
        return Effect(STEP, (f"{tool} commits nothing by itself",))
    elements = _elements(target)
    by_ref = {str(h.get("ref")): e for h, e in elements}
    first = elements[0][1] if elements else None
    if tool in ("click", "click_trusted", "click_xy"):
        if first is not None:
            return _activated(first, title)
        if tool == "click_xy":
            return Effect("unknown", ("a click at a point: the host does not know the element",))
        # Only a what-if case or a console call names no element: a page call's ref is known.
        return Effect(STEP, ("no facts about the element were given",))
    if tool in ("type", "type_trusted"):
        if not params.get("submit"):
            return Effect(STEP, ("typing without submitting",))
        return _entered(first, title)
    if tool == "press_key":
        return _pressed(str(params.get("key") or ""), first, title)
    if tool == "batch_actions":
        return _batch(params.get("actions"), by_ref, title)
    if category in ("fill", "interact"):
        return Effect(STEP, ("choosing or filling commits nothing by itself",))
    return Effect(STEP, (f"{tool} is not an action on a page",))


def search_field(target: Mapping[str, Any] | None) -> bool:
    """Whether the acted-on element is a search field (a searchbox, or an input of type search):
    what is typed there is looked for on its site, not sent to anyone."""
    elements = _elements(target) if isinstance(target, dict) else []
    if len(elements) != 1:
        return False
    el = elements[0][1]
    return el.role == "searchbox" or el.input_type == "search"


def _batch(actions: Any, by_ref: Mapping[str, _Element], title: str) -> Effect:
    if not isinstance(actions, Sequence) or isinstance(actions, (str, bytes)):
        return Effect("unknown", ("the batch's actions cannot be read",))
    for action in actions:
        if not isinstance(action, dict):
            return Effect("unknown", ("the batch's actions cannot be read",))
        element = by_ref.get(str(action.get("ref")))
        kind = action.get("action")
        if kind == "click":
            found = _activated(element, title) if element is not None else Effect("unknown", ("an unknown element",))
        elif kind == "type" and action.get("submit"):
            found = _entered(element, title)
        else:
            continue
        if found.commits:
            return found
    return Effect(STEP, ("the batch fills or chooses without committing",))


@functools.lru_cache(maxsize=4096)
def _pressed(key: str, element: _Element | None, title: str) -> Effect:
    key = key.lower().replace(" ", "")
    if key in _ENTER:
        if element is None:
            return Effect("submit", ("Enter where the host does not know the focus",))
        if element.role in _FIELD_ROLES or element.input_type or element.tag in ("input", "textarea"):
            return _entered(element, title)
        return _activated(element, title)
    if key in ("space", " ") and element is not None and element.role in ("button", "link", "menuitem"):
        return _activated(element, title)
    return Effect(STEP, (f"the key {quoted(key, 40)} moves or chooses",))


@functools.lru_cache(maxsize=4096)
def _activated(el: _Element, title: str) -> Effect:
    vocab = vocabulary()
    facts = _named(el)
    commit = vocab.commits.longest(el.text, edges=True) if el.text else None
    if el.role in ("textbox", "searchbox") or (el.tag == "textarea" and not el.submits):
        # A click into a text field places the caret; what is typed there is judged when sent.
        return Effect(STEP, (*facts, "a click into a text field focuses it"))
    if el.role in _TOGGLES:
        if commit is not None and commit[1] in _TOGGLE_COMMITS:
            return Effect(commit[1], (*facts, f"a {el.role} that changes {commit[1]}"))
        return Effect(STEP, (*facts, f"a {el.role} chooses a setting"))
    if el.url and el.method == "GET" and not el.submits and el.role == "link" and _leaves_document(el.url):
        found = _url_effect(el.url, post=False)
        if found is not None:
            return Effect(found[0], (*facts, f"its link acts when opened: {found[1]}"))
        if not _carries_token(el.url):
            return Effect(STEP, (*facts, "opening its link commits nothing by itself"))
        facts = (*facts, "its link carries a one-time token, so opening it acts")
    step = vocab.steps.longest(el.text) if el.text else None
    if commit is not None and (step is None or len(commit[0]) >= len(step[0])):
        if commit[1] in ("delete", "pay") and _on_cart(el, title):
            # A cart's buttons change the cart or lead to the checkout, where paying asks.
            return Effect(STEP, (*facts, f"{'removes an item from' if commit[1] == 'delete' else 'leaves'} a cart"))
        return Effect(commit[1], (*facts, f"named for {commit[1]} ({quoted(commit[0], 60)})"))
    generic = vocab.confirm.longest(el.text) if el.text else None
    onward = vocab.forward.longest(el.text) if el.text else None
    longest_generic = max((len(m[0]) for m in (generic, onward) if m is not None), default=0)
    if step is not None and len(step[0]) >= longest_generic:
        return Effect(STEP, (*facts, f"named for a step ({quoted(step[0], 60)})"))
    if onward is not None and (generic is None or len(onward[0]) >= len(generic[0])):
        review = _final_review(el, title)
        if review is not None:
            return Effect("pay", (*facts, "moves on from the final review of a payment", review))
        tokens = {t for f in el.form_fields for t in f.lower().split()} if el.submits else set()
        if tokens & {"cc-number", "cc-csc"}:
            # "Continue" under the card number sends the card: the payment is made here (an
            # amount alone is a wizard's first page, with its review still to come).
            return Effect("pay", (*facts, "moves on by submitting the card its form carries"))
        if "new-password" in tokens:
            return Effect("security", (*facts, "moves on by submitting a new password"))
        return Effect(STEP, (*facts, "moves on to the next step"))
    context = _context(el, title)
    if generic is not None:
        if context is not None:
            return Effect(context[0], (*facts, "a generic confirmation", context[1]))
        if el.submits:
            return Effect("submit", (*facts, "a generic confirmation that submits its form"))
        if generic[0] == el.text and vocab.agreement.longest(el.text) is None:
            # A bare "Save" or "Confirm" commits whatever its page holds, which nothing names.
            return Effect("submit", (*facts, "a bare confirmation of what nothing around it names"))
        return Effect(STEP, (*facts, "a generic confirmation with nothing to commit around it"))
    if el.url and not el.submits:
        return _opened(el.url, "its link", facts)
    if el.submits:
        if el.method == "GET":
            return Effect(STEP, (*facts, "submits a GET form (a search or filter)"))
        if context is not None:
            return Effect(context[0], (*facts, "its form's submit control", context[1]))
        return Effect("submit", (*facts, "an unknown submit control leans to commit"))
    return Effect(STEP, (*facts, "named for no commit"))


@functools.lru_cache(maxsize=4096)
def _entered(el: _Element | None, title: str) -> Effect:
    if el is None:
        return Effect("submit", ("submits a field the host does not know",))
    vocab = vocabulary()
    facts = _named(el)
    words = " ".join(w for w in (el.text, normalize(el.field_name, 200)) if w)
    if el.role == "searchbox" or el.input_type == "search" or (words and vocab.search_fields.longest(words)):
        return Effect(STEP, (*facts, "Enter in a search field"))
    if words and vocab.send_fields.longest(words):
        return Effect("send", (*facts, "Enter in a message field sends it"))
    context = _context(el, title)
    if context is not None:
        return Effect(context[0], (*facts, "Enter submits its form", context[1]))
    if el.method == "GET":
        return Effect(STEP, (*facts, "Enter submits a GET form (a search or filter)"))
    return Effect("submit", (*facts, "Enter submits a form the host cannot name"))


def _context(el: _Element, title: str) -> tuple[str, str] | None:
    """The effect the element's surroundings name: its form's fields, then its heading and
    title, then its form's destination (None when nothing names one)."""
    if el.submits or el.form_fields:
        fields = _form_effect(el.form_fields)
        if fields is not None:
            return fields
    found = _page_context(el, title)
    if found is not None:
        return found
    if el.url and el.method == "POST":
        words = _url_effect(el.url, post=True)
        if words is not None:
            return words
    return None


def _page_context(el: _Element, title: str) -> tuple[str, str] | None:
    context = vocabulary().context
    for text, where in ((normalize(el.heading, 300), "heading"), (title, "title")):
        if text:
            found = context.longest(text)
            if found is not None:
                return found[1], f"its {where} names {found[1]} ({quoted(found[0], 60)})"
    return None


def _final_review(el: _Element, title: str) -> str | None:
    final = vocabulary().final_review
    for text, where in ((normalize(el.heading, 300), "heading"), (title, "title")):
        found = final.longest(text) if text else None
        if found is not None:
            return f"its {where} shows the final review ({quoted(found[0], 60)})"
    return None


def _on_cart(el: _Element, title: str) -> bool:
    cart = vocabulary().cart
    return any(cart.longest(text) is not None for text in (normalize(el.heading, 300), title) if text)


def _leaves_document(url: str) -> bool:
    """False for a link that only changes the fragment or runs script (a button in a link's
    clothes: its name says what it does)."""
    lowered = url[:16].lower()
    return not (lowered.startswith(("javascript:", "#")) or "#" in url)


def _form_effect(fields: tuple[str, ...]) -> tuple[str, str] | None:
    tokens = {t for f in fields for t in f.lower().split()}
    if any(t.startswith(_PAY_FIELDS) for t in tokens):
        return "pay", "its form carries payment fields"
    if "new-password" in tokens:
        return "security", "its form sets a new password"
    if "file" in tokens:
        return "upload", "its form carries a file"
    if "current-password" in tokens or "password" in tokens:
        return None  # a sign-in: the password field itself is judged where it is typed
    if tokens & _PERSONAL_FIELDS:
        return "submit", "its form carries personal details"
    return None


def _opened(url: str, what: str, facts: tuple[str, ...] = ()) -> Effect:
    found = _url_effect(url, post=False)
    if found is not None:
        return Effect(found[0], (*facts, f"{what} acts when opened: {found[1]}"))
    return Effect(STEP, (*facts, f"opening {what} commits nothing by itself"))


def _url_effect(url: str, *, post: bool) -> tuple[str, str] | None:
    """The effect a destination's path (and action keys of its query) names. Opened by GET, only
    the words that act when a link is merely followed count (unsubscribe, delete, revoke)."""
    try:
        parts = urlsplit(url[:4096])
    except ValueError:
        return None
    text = " " + " ".join(re.split(r"[^a-z0-9]+", parts.path.lower())).strip()
    actions = [v for k, v in parse_qsl(parts.query[:2000]) if k.lower() in _ACTION_KEYS]
    if actions:
        text += " " + " ".join(re.split(r"[^a-z0-9]+", " ".join(actions).lower()))
    text += " "
    acting = post or _carries_token(url)
    for effect, words in vocabulary().url.items():
        if not acting and effect != "delete":
            continue
        for word in words:
            if f" {word} " in text:
                return effect, f"the path names {quoted(word, 40)}"
    return None


def _carries_token(url: str) -> bool:
    """True for a URL whose query carries a one-time token (`_wpnonce`, `csrf`...)."""
    query = url.partition("?")[2].partition("#")[0]
    if not query:
        return False
    nonces = vocabulary().url_nonce
    return any(key.lower() in nonces for key, _ in parse_qsl(query[:2000], keep_blank_values=True))


def _mcp(tool: str) -> Effect:
    name = tool.split("__", 2)[-1]
    words = normalize(re.sub(r"([a-z])([A-Z])", r"\1 \2", name), 200)
    found = vocabulary().commits.longest(words)
    if found is not None:
        return Effect(found[1], (f"the MCP tool is named for {found[1]} ({quoted(found[0], 60)})",))
    if _MCP_READS.match(words):
        return Effect(STEP, ("the MCP tool is named for reading",))
    return Effect(STEP, ("the MCP tool is named for no commit",))


def _named(el: _Element) -> tuple[str, ...]:
    if el.long:
        return ("its name is too long to read: judged by structure",)
    return (f"{el.role or 'element'} {quoted(el.shown, 80)}",) if el.shown else (f"an unnamed {el.role or 'element'}",)


def _elements(target: Mapping[str, Any]) -> list[tuple[Mapping[str, Any], _Element]]:
    """The acted-on elements as (hint, element), from `hints` or a single-element target."""
    hints = target.get("hints")
    if isinstance(hints, list) and hints:
        return [(h, _element(h, target)) for h in hints if isinstance(h, dict)]
    if target.get("role") is not None or target.get("name") is not None:
        return [(target, _element(target, target))]
    return []


def _get(hint: Mapping[str, Any], snake: str, camel: str) -> Any:
    value = hint.get(snake)
    return hint.get(camel) if value is None else value


def _element(hint: Mapping[str, Any], target: Mapping[str, Any]) -> _Element:
    shown = hint.get("name") or hint.get("label") or hint.get("placeholder") or ""
    if not isinstance(shown, str):
        shown = str(shown)
    long = len(shown) > MAX_NAME
    lead = hint.get("destination")
    url, method = "", ""
    if isinstance(lead, dict):
        url, method = str(lead.get("url") or ""), str(lead.get("method") or "GET").upper()
    elif isinstance(lead, str):
        url, method = lead, str(target.get("method") or "GET").upper()
    fields = _get(hint, "form_fields", "formFields")
    return _Element(
        role=str(hint.get("role") or ""), text="" if long else normalize(shown, MAX_NAME), shown="" if long else shown,
        long=long, tag=str(hint.get("tag") or ""), input_type=str(_get(hint, "input_type", "inputType") or ""),
        autocomplete=str(hint.get("autocomplete") or ""), field_name=str(_get(hint, "field_name", "fieldName") or ""),
        submits=bool(hint.get("submits")),
        form_fields=tuple(str(f) for f in fields[:50]) if isinstance(fields, list) else (),
        heading=str(hint.get("heading") or "")[:300], url=url, method=method)
