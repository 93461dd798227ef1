"""Accessibility-tree text: the pure part of `read_page_deep` (and of the L1 empty-page fallback).

Input is CDP `Accessibility.AXNode` dicts per frame; output is the same indented line format as
`read_page` (`- role "name" [attr]... [ref=...]`). Which nodes get refs, how iframes are
stitched in and how the text fits its budget are decided here; `deep_read` does the CDP calls.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from protocol import roles

# Chromium's own names for roles ARIA names otherwise; the shared tables speak ARIA.
ARIA_NAMES = {"image": "img", "DisclosureTriangle": "button", "MenuListOption": "option", "ToggleButton": "button",
              "PopUpButton": "combobox", "textField": "textbox", "ColorWell": "button"}
# Roles that name something a person can operate (the tables `read_page` uses too).
INTERACTIVE_ROLES = roles.INTERACTIVE_ROLES
# Actionable roles whose children are listed too (a listbox lists its options, a tree item its
# group, a focusable article what it holds).
DESCENDING_ROLES = roles.DESCENDING_ROLES
# Kept as structure, without a ref, unless made focusable (then `FOCUSABLE_STRUCTURE` get refs).
STRUCTURAL_ROLES = roles.STRUCTURAL_ROLES | frozenset({
    "image", "row", "cell", "columnheader", "rowheader", "gridcell", "Canvas", "figure",
})
FOCUSABLE_STRUCTURE = roles.FOCUSABLE_STRUCTURE
TEXT_ROLES = frozenset({"StaticText"})
SKIPPED_ROLES = frozenset({"InlineTextBox", "LineBreak"})
# Roles whose text children only repeat their name.
NAMED_BY_CONTENT = frozenset({"heading", "listitem", "cell", "columnheader", "rowheader"})
EDITABLE_ROLES = frozenset({"textbox", "searchbox", "combobox", "spinbutton", "textField"})
# Event-listener candidates: nodes the accessibility tree does not call interactive.
LISTENER_CANDIDATE_ROLES = frozenset({"generic", "none", "group", "paragraph", "image", "img", "listitem", "cell",
                                      "gridcell", "Canvas", "figure", "Section", "div"})
NOT_A_TARGET = frozenset({"RootWebArea", "WebArea", "Iframe", "StaticText", "InlineTextBox"})

TEXT_LIMIT = 120
NAME_LIMIT = 120
VALUE_LIMIT = 40
REF_OVERFLOW_CHARS = 12_000


def role_of(node: dict[str, Any]) -> str:
    role = node.get("role") or {}
    return str(role.get("value") or "")


def aria_role(node: dict[str, Any]) -> str:
    """A node's role in ARIA's words (Chromium's own role names mapped)."""
    role = role_of(node)
    return ARIA_NAMES.get(role, role)


def name_of(node: dict[str, Any]) -> str:
    name = node.get("name") or {}
    return " ".join(str(name.get("value") or "").split())


def prop(node: dict[str, Any], key: str) -> Any:
    """The value of one AX property (None when absent)."""
    for item in node.get("properties") or ():
        if item.get("name") == key:
            return (item.get("value") or {}).get("value")
    return None


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def is_interactive(node: dict[str, Any]) -> bool:
    """Whether an AX node gets a ref of its own."""
    if node.get("ignored") or not node.get("backendDOMNodeId"):
        return False
    if role_of(node) in NOT_A_TARGET:
        return False
    role = aria_role(node)
    if role in INTERACTIVE_ROLES:
        return True
    return prop(node, "focusable") is True and (role not in STRUCTURAL_ROLES or role in FOCUSABLE_STRUCTURE)


def _hides_value(node: dict[str, Any], input_type: str | None) -> bool:
    # A text field the page labels "Account password" or "PIN" holds a secret as much as a
    # password input does (the same judgement as the gatekeeper's credential targets).
    from host.gatekeeper.facts.credential_target import names_credential

    return input_type == "password" or names_credential(str((node.get("name") or {}).get("value") or ""))


def attributes(node: dict[str, Any], input_type: str | None = None) -> list[str]:
    """The bracketed states of a node, in a fixed order (values of password fields, and of fields
    whose name names a credential, never)."""
    out = []
    level = prop(node, "level")
    if level is not None:
        out.append(f"level={level}")
    role = role_of(node)
    if input_type and input_type not in ("text", "search"):
        out.append(f"type={input_type}")
    checked = prop(node, "checked")
    if checked in ("true", True):
        out.append("checked")
    elif checked == "mixed":
        out.append("checked=mixed")
    if role in EDITABLE_ROLES and role not in roles.RANGE_ROLES:
        value = " ".join(str((node.get("value") or {}).get("value") or "").split())
        if value and _hides_value(node, input_type):
            out.append("value hidden")
        elif value:
            out.append(f"value={quote(clip(value, VALUE_LIMIT))}")
    if role in roles.RANGE_ROLES:
        out.extend(range_value(node))
    if prop(node, "disabled") is True:
        out.append("disabled")
    if prop(node, "busy") is True:  # still loading (a feed fetching more)
        out.append("busy")
    expanded = prop(node, "expanded")
    if expanded is True:
        out.append("expanded")
    elif expanded is False:
        out.append("collapsed")
    if prop(node, "selected") is True:
        out.append("selected")
    pressed = prop(node, "pressed")
    if pressed in ("true", True):
        out.append("pressed")
    elif pressed == "mixed":
        out.append("pressed=mixed")
    elif pressed in ("false", False):  # a toggle button that is off (else it reads as a plain button)
        out.append("pressed=false")
    if prop(node, "invalid") == "true":
        out.append("invalid")
    if prop(node, "required") is True:
        out.append("required")
    if prop(node, "readonly") is True and role not in roles.INTERACTIVE_ROLES - EDITABLE_ROLES:
        out.append("readonly")
    return out


def _number(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def range_value(node: dict[str, Any]) -> list[str]:
    """A range widget's value (its spoken text when it has one) and bounds."""
    out = []
    text = " ".join(str(prop(node, "valuetext") or "").split())
    value = (node.get("value") or {}).get("value")
    if text and text != _number(value):
        out.append(f"value={quote(clip(text, VALUE_LIMIT))}")
    elif value not in (None, ""):
        out.append(f"value={_number(value)}")
    for key in ("valuemin", "valuemax"):
        bound = prop(node, key)
        if bound is not None:
            out.append(f"{key[5:]}={_number(bound)}")
    return out


@dataclass
class FrameAX:
    """The accessibility tree of one frame document, and where it lives."""

    key: str  # "<session or 'tab'>/<frame id>"
    session_id: str | None
    frame_id: str
    loader_id: str
    url: str
    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    root_id: str | None = None
    out_of_process: bool = False
    origin: str = ""  # the origin actions in this frame are judged at ("" when unknown)
    elements: int = 0  # the document's elements, when it was counted
    elements_read: int = 0
    complete: bool = True  # False: only the start of the document was read

    @property
    def document_backend_id(self) -> int:
        root = self.nodes.get(self.root_id or "")
        return int(root.get("backendDOMNodeId") or 0) if root else 0

    @property
    def title(self) -> str:
        root = self.nodes.get(self.root_id or "")
        return name_of(root) if root else ""

    def walk(self) -> Iterator[dict[str, Any]]:
        """Nodes in document order (depth first), the root first."""
        if self.root_id is None:
            return
        stack = [self.root_id]
        seen: set[str] = set()
        while stack:
            node_id = stack.pop()
            node = self.nodes.get(node_id)
            if node is None or node_id in seen:
                continue
            seen.add(node_id)
            yield node
            stack.extend(reversed([str(c) for c in node.get("childIds") or ()]))


def frame_from_nodes(key: str, session_id: str | None, frame_id: str, loader_id: str, url: str,
                     nodes: list[dict[str, Any]], out_of_process: bool = False) -> FrameAX:
    """Index the flat node list of `Accessibility.getFullAXTree`."""
    frame = FrameAX(key, session_id, frame_id, loader_id, url, out_of_process=out_of_process)
    for node in nodes:
        frame.nodes[str(node.get("nodeId"))] = node
    roots = [n for n in nodes if not n.get("parentId")]
    web = [n for n in roots if role_of(n) in ("RootWebArea", "WebArea")]
    root = (web or roots or [None])[0]
    frame.root_id = str(root.get("nodeId")) if root else None
    return frame


def innermost_candidates(frame: FrameAX, taken: set[int], limit: int) -> list[dict[str, Any]]:
    """Up to `limit` nodes (document order) that the tree does not call interactive and that
    hold nothing interactive: the nodes worth asking for event listeners."""
    has_interactive: dict[str, bool] = {}
    order = list(frame.walk())
    for node in reversed(order):  # children before parents
        node_id = str(node.get("nodeId"))
        inside = any(has_interactive.get(str(c), False) for c in node.get("childIds") or ())
        has_interactive[node_id] = inside or is_interactive(node) or role_of(node) == "Iframe"
    out = []
    for node in order:
        backend = node.get("backendDOMNodeId")
        if (node.get("ignored") or not backend or backend in taken or role_of(node) not in LISTENER_CANDIDATE_ROLES
                or has_interactive[str(node.get("nodeId"))]):
            continue
        out.append(node)
        if len(out) >= limit:
            break
    return out


def text_inside(frame: FrameAX, node: dict[str, Any], limit: int = NAME_LIMIT) -> str:
    """The static text under a node, collapsed (a name for nodes the tree leaves unnamed)."""
    parts: list[str] = []
    stack = [str(c) for c in reversed(node.get("childIds") or ())]
    size = 0
    while stack and size < limit:
        child = frame.nodes.get(stack.pop())
        if child is None:
            continue
        if role_of(child) in TEXT_ROLES:
            text = name_of(child)
            parts.append(text)
            size += len(text) + 1
        else:
            stack.extend(str(c) for c in reversed(child.get("childIds") or ()))
    return clip(" ".join(" ".join(parts).split()), limit)


@dataclass
class Line:
    kind: str  # ref | landmark | struct | text | frame
    depth: int
    body: str
    ref: str | None = None


@dataclass
class Rendered:
    lines: list[str]
    dropped: int
    dropped_refs: int
    unshown_refs: tuple[str, ...] = ()  # the refs of the ref lines dropped


@dataclass(frozen=True)
class RefMark:
    """How a node with a ref is shown: its ref, the role shown, its input type, extra states."""

    ref: str
    role: str
    input_type: str | None = None
    extra: tuple[str, ...] = ()


RefFor = Callable[[FrameAX, dict[str, Any]], "RefMark | None"]
FrameFor = Callable[[FrameAX, dict[str, Any]], "FrameAX | str | None"]


def build_lines(root: FrameAX, ref_for: RefFor, frame_for: FrameFor, max_frames: int = 64) -> list[Line]:
    """Lines for `root` and, stitched under each iframe, the frames it contains. An iframe whose
    content is at another origin than the tab, or than the frame around it, names that origin:
    the model must know that acting there is acting on another site.

    `ref_for(frame, node)` returns the RefMark of nodes that have a ref;
    `frame_for(frame, iframe_node)` returns the content frame, or a note why there is none.
    """
    lines: list[Line] = []
    visited = 0
    holding: dict[tuple[str, str], bool] = {}

    def holds_interactive(frame: FrameAX, node: dict[str, Any]) -> bool:
        """Whether anything below `node` is interactive (a container that is actionable itself)."""
        key = (frame.key, str(node.get("nodeId")))
        if key not in holding:
            holding[key] = False  # guards against a cycle in a malformed tree
            kids = [frame.nodes[str(c)] for c in node.get("childIds") or () if str(c) in frame.nodes]
            holding[key] = any(is_interactive(kid) or holds_interactive(frame, kid) for kid in kids)
        return holding[key]

    def frame_lines(frame: FrameAX, depth: int) -> None:
        nonlocal visited
        visited += 1
        if frame.root_id is not None:
            node_lines(frame, frame.nodes[frame.root_id], depth, False)

    def node_lines(frame: FrameAX, node: dict[str, Any], depth: int, quiet_text: bool) -> None:
        role = role_of(node)
        children = [frame.nodes[str(c)] for c in node.get("childIds") or () if str(c) in frame.nodes]
        if role in SKIPPED_ROLES:
            return
        if role in TEXT_ROLES:
            text = name_of(node)
            if text and not quiet_text and not node.get("ignored"):
                lines.append(Line("text", depth, f"text: {quote(clip(text, TEXT_LIMIT))}"))
            return
        if role == "Iframe" and not node.get("ignored"):
            content = frame_for(frame, node)
            lines.append(Line("frame", depth, _iframe_line(node, content, frame.origin, root.origin)))
            if isinstance(content, FrameAX) and visited < max_frames:
                frame_lines(content, depth + 1)
            return
        mark = ref_for(frame, node)
        if mark is not None:
            name = name_of(node) or (text_inside(frame, node) if role in LISTENER_CANDIDATE_ROLES else "")
            lines.append(Line("ref", depth, _ref_line(node, mark, name), mark.ref))
            if aria_role(node) in DESCENDING_ROLES or holds_interactive(frame, node):
                quiet = aria_role(node) in roles.NAME_FROM_CONTENT and bool(name)
                for child in children:
                    node_lines(frame, child, depth + 1, quiet)
            return
        if (aria_role(node) in STRUCTURAL_ROLES and not node.get("ignored")
                and (name_of(node) or aria_role(node) not in roles.NAMED_ONLY)):
            name = name_of(node)
            at = len(lines)
            body = _with_attrs(role, name, attributes(node))
            # Landmarks survive the budget as refs do: they are the page's map.
            lines.append(Line("landmark" if aria_role(node) in roles.LANDMARK_ROLES else "struct", depth, body))
            for child in children:
                node_lines(frame, child, depth + 1, quiet_text or role in NAMED_BY_CONTENT and bool(name))
            if not name and len(lines) == at + 1:
                lines.pop()  # an empty unnamed container says nothing
            return
        for child in children:
            node_lines(frame, child, depth, quiet_text)

    frame_lines(root, 0)
    return lines


def _with_attrs(role: str, name: str, attrs: list[str]) -> str:
    return role + (f" {quote(clip(name, NAME_LIMIT))}" if name else "") + "".join(f" [{attr}]" for attr in attrs)


def _iframe_line(node: dict[str, Any], content: "FrameAX | str | None", around: str, tab: str) -> str:
    """An iframe's line: out of process, or at another origin than the frame `around` it or the
    `tab`, says so; one with no content read says why."""
    label = name_of(node)
    head = f"iframe {quote(clip(label, 80))}" if label else "iframe"
    if not isinstance(content, FrameAX):
        return f"{head} [{content or 'not reachable'}]"
    if content.out_of_process:
        head += " [out-of-process]"
    if content.origin and (content.origin != around or content.origin != tab):
        head += f" [origin={content.origin}]"
    return head


def _ref_line(node: dict[str, Any], mark: RefMark, name: str) -> str:
    body = _with_attrs(mark.role, name, [*attributes(node, mark.input_type), *mark.extra])
    # Where keys go, after the ref as in read_page: it moves with every action.
    focused = " [focused]" if prop(node, "focused") is True else ""
    return f"{body} [ref={mark.ref}]{focused}"


def fit(lines: list[Line], budget: int) -> Rendered:
    """Fit lines into `budget` characters: text goes first, then structure (from the end of the
    page); ref, landmark and frame lines stay, unless refs run far past the budget. Counts what
    it drops."""
    costs = [line.depth * 2 + len(line.body) + 3 for line in lines]
    total = sum(costs)
    dropped = [False] * len(lines)
    count = 0
    refs = 0
    for kind in ("text", "struct"):
        for i in range(len(lines) - 1, -1, -1):
            if total <= budget:
                break
            if lines[i].kind == kind and not dropped[i]:
                dropped[i] = True
                total -= costs[i]
                count += 1
    ceiling = budget + REF_OVERFLOW_CHARS
    for i in range(len(lines) - 1, -1, -1):
        if total <= ceiling:
            break
        if lines[i].kind == "ref" and not dropped[i]:
            dropped[i] = True
            total -= costs[i]
            count += 1
            refs += 1
    shown = [f"{'  ' * line.depth}- {line.body}" for i, line in enumerate(lines) if not dropped[i]]
    unshown = tuple(line.ref for i, line in enumerate(lines) if dropped[i] and line.ref)
    return Rendered(shown, count, refs, unshown)


def truncation_marker(rendered: Rendered) -> str:
    if not rendered.dropped:
        return ""
    if not rendered.dropped_refs:
        return f"[truncated: {rendered.dropped} lines]"
    return f"[truncated: {rendered.dropped} lines, {rendered.dropped_refs} of them with refs]"
