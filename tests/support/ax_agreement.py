"""Compare `read_page`'s lines with Chromium's own accessibility tree (`Accessibility.getFullAXTree`
over the test's CDP connection): role, name and states of every node the snapshot gives a ref,
every node Chromium calls interactive, and the landmarks of both. Used by the agreement test and
the snapshot benchmark."""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import websockets

from protocol.roles import INTERACTIVE_ROLES, LANDMARK_ROLES, RANGE_ROLES
from tests.support.cdp import page_targets
from tests.support.waiting import until

# The extension's isolated world, where the page executor keeps its ref map.
WORLD_NAME = "Tabwarden"
# Chromium's own role names for what ARIA calls otherwise.
CHROMIUM_ROLES = {
    "image": "img", "SvgRoot": "generic", "sectionheader": "generic", "sectionfooter": "generic",
    "LabelText": "label", "DisclosureTriangle": "button", "MenuListOption": "option", "Legend": "generic",
}
# Chromium's roles for date and time inputs, whose parts are its own.
FIELD_ROLES = frozenset({"Date", "DateTime", "InputTime"})
LINE = re.compile(r'^(?P<indent> *)- (?P<role>[a-z]+)(?: (?P<name>"(?:[^"\\]|\\.)*"))?(?P<attrs>(?: \[[^\]]*\])*)$')
ATTR = re.compile(r"\[([^\]]*)\]")
COMPARED_STATES = ("checked", "checked=mixed", "pressed", "pressed=mixed", "pressed=false", "expanded", "collapsed", "selected",
                   "disabled", "required", "readonly", "invalid")


@dataclass(frozen=True)
class Line:
    """One parsed snapshot line."""

    role: str
    name: str
    attrs: tuple[str, ...]
    ref: str | None


def parse(text: str) -> list[Line]:
    """The role, name, attributes and ref of every element line of a snapshot."""
    out = []
    for raw in text.split("\n"):
        body = raw.split("] ", 1)[1] if raw.startswith("[tabId=") else raw
        match = LINE.match(body)
        if not match or match["role"] == "text":
            continue
        attrs = tuple(ATTR.findall(match["attrs"] or ""))
        ref = next((a[4:] for a in attrs if a.startswith("ref=")), None)
        name = json.loads(match["name"]) if match["name"] else ""
        out.append(Line(match["role"], name, tuple(a for a in attrs if not a.startswith("ref=")), ref))
    return out


@dataclass
class Difference:
    """One disagreement: where, on what, and both sides."""

    page: str
    role: str
    name: str
    field: str  # role | name | states | value | description | ref | landmark
    ours: str
    chromium: str


@dataclass
class Tally:
    """Agreement counts over the compared nodes."""

    nodes: int = 0
    role_agree: int = 0
    name_agree: int = 0
    states_agree: int = 0
    differences: list[Difference] = field(default_factory=list)

    def add(self, other: "Tally") -> None:
        """Count `other`'s nodes and differences in with these."""
        self.nodes += other.nodes
        self.role_agree += other.role_agree
        self.name_agree += other.name_agree
        self.states_agree += other.states_agree
        self.differences += other.differences

    def ratio(self, agree: int) -> float:
        """`agree` as a share of the compared nodes."""
        return agree / self.nodes if self.nodes else 1.0

    def summary(self) -> str:
        """One line: the agreement on role, name and states."""
        return (f"{self.nodes} nodes: role {self.ratio(self.role_agree):.1%}, name {self.ratio(self.name_agree):.1%}, "
                f"states {self.ratio(self.states_agree):.1%}")


class AXSession:
    """A CDP connection to one page that keeps the execution contexts it is told about."""

    def __init__(self, ws: Any):
        self._ws = ws
        self._ids = itertools.count(1)
        self.contexts: list[dict[str, Any]] = []

    @classmethod
    async def open(cls, port: int, url_part: str) -> "AXSession":
        """A session on the first page whose URL contains `url_part`."""
        def target() -> dict[str, Any] | None:
            return next((t for t in page_targets(port) if url_part in t.get("url", "")), None)

        found = await until(target, 5, f"a page whose URL contains {url_part!r}", interval=0.05)
        return cls(await websockets.connect(found["webSocketDebuggerUrl"], max_size=256 * 1024 * 1024))

    async def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """One command's result; events that arrive meanwhile are kept where they matter."""
        msg_id = next(self._ids)
        await self._ws.send(json.dumps({"id": msg_id, "method": method, "params": params or {}}))
        while True:
            reply = json.loads(await asyncio.wait_for(self._ws.recv(), 30))
            if reply.get("method") == "Runtime.executionContextCreated":
                self.contexts.append(reply["params"]["context"])
            if reply.get("id") == msg_id:
                if "error" in reply:
                    raise AssertionError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    async def backend_ids(self, refs: list[str]) -> dict[str, int]:
        """The DOM node (backend id) of each L1 ref, resolved by the page executor itself."""
        await self.send("Runtime.enable")
        world = next(c for c in self.contexts if c.get("name") == WORLD_NAME and c.get("auxData", {}).get("isDefault") is False
                     and c.get("auxData", {}).get("frameId"))
        out = {}
        for ref in refs:
            found = await self.send("Runtime.evaluate", {
                "expression": f"globalThis.__tabwarden.elementForRef({json.dumps(ref)})", "contextId": world["id"]})
            object_id = found.get("result", {}).get("objectId")
            if object_id:
                node = await self.send("DOM.describeNode", {"objectId": object_id})
                out[ref] = int(node["node"]["backendNodeId"])
        await self.send("Runtime.disable")
        return out

    async def ax_nodes(self) -> list[dict[str, Any]]:
        """Chromium's full accessibility tree of the page's main frame."""
        return (await self.send("Accessibility.getFullAXTree"))["nodes"]

    async def close(self) -> None:
        """Close the websocket."""
        await self._ws.close()


def _prop(node: dict[str, Any], key: str) -> Any:
    for item in node.get("properties") or ():
        if item.get("name") == key:
            return (item.get("value") or {}).get("value")
    return None


def chromium_role(node: dict[str, Any]) -> str:
    """Chromium's role for a node, in ARIA's words."""
    role = str((node.get("role") or {}).get("value") or "")
    return CHROMIUM_ROLES.get(role, role)


def chromium_name(node: dict[str, Any]) -> str:
    """Chromium's accessible name of a node, whitespace collapsed."""
    return " ".join(str((node.get("name") or {}).get("value") or "").split())


def chromium_states(node: dict[str, Any]) -> set[str]:
    """The compared states Chromium reports, in the snapshot's words."""
    out = set()
    for key in ("checked", "pressed"):
        value = _prop(node, key)
        if value in ("true", True):
            out.add(key)
        elif value == "mixed":
            out.add(f"{key}=mixed")
    if _prop(node, "pressed") in ("false", False):
        out.add("pressed=false")
    expanded = _prop(node, "expanded")
    if expanded is True:
        out.add("expanded")
    elif expanded is False:
        out.add("collapsed")
    for key in ("selected", "disabled", "required", "readonly"):
        if _prop(node, key) is True:
            out.add(key)
    if _prop(node, "invalid") not in (None, "false"):
        out.add("invalid")
    return out


def our_states(line: Line) -> set[str]:
    return {attr for attr in line.attrs if attr in COMPARED_STATES}


def our_value(line: Line) -> str | None:
    for attr in line.attrs:
        if attr.startswith("value="):
            value = attr[6:]
            return json.loads(value) if value.startswith('"') else value
    return None


def our_description(line: Line) -> str | None:
    for attr in line.attrs:
        if attr.startswith("desc="):
            return json.loads(attr[5:])
    return None


def same_name(ours: str, theirs: str) -> bool:
    """Equal, or ours is the browser's name cut at 80 characters (ending in an ellipsis)."""
    return ours == theirs or (ours.endswith("…") and len(ours) == 80 and theirs.startswith(ours[:-1]))


def _descendants(nodes: list[dict[str, Any]], pick: Any) -> set[str]:
    """The ids of every node below a node `pick` accepts."""
    children = {n["nodeId"]: [str(c) for c in n.get("childIds") or ()] for n in nodes}
    out: set[str] = set()
    stack = [c for n in nodes if pick(n) for c in children[n["nodeId"]]]
    while stack:
        node_id = stack.pop()
        if node_id not in out:
            out.add(node_id)
            stack.extend(children.get(node_id, ()))
    return out


def compare(page: str, text: str, nodes: list[dict[str, Any]], backend_of: dict[str, int]) -> Tally:
    """Compare one snapshot with Chromium's tree of the same page."""
    tally = Tally()
    by_backend = {int(n["backendDOMNodeId"]): n for n in nodes if n.get("backendDOMNodeId")}
    lines = parse(text)
    seen: set[int] = set()
    for line in lines:
        if line.ref is None or line.ref not in backend_of:
            continue
        backend = backend_of[line.ref]
        seen.add(backend)
        node = by_backend.get(backend)
        tally.nodes += 1
        if node is None or node.get("ignored"):
            tally.differences.append(Difference(page, line.role, line.name, "ref", "ref", "ignored"))
            continue
        role, name = chromium_role(node), chromium_name(node)
        if role == line.role:
            tally.role_agree += 1
        else:
            tally.differences.append(Difference(page, line.role, line.name, "role", line.role, role))
        if same_name(line.name, name):
            tally.name_agree += 1
        else:
            tally.differences.append(Difference(page, line.role, line.name, "name", line.name, name))
        states_ok = our_states(line) == chromium_states(node)
        if not states_ok:
            tally.differences.append(Difference(page, line.role, line.name, "states", " ".join(sorted(our_states(line))),
                                                " ".join(sorted(chromium_states(node)))))
        described = our_description(line)
        if described is not None and described != " ".join(str((node.get("description") or {}).get("value") or "").split()):
            states_ok = False
            tally.differences.append(Difference(page, line.role, line.name, "description", described,
                                                str((node.get("description") or {}).get("value") or "")))
        if role in RANGE_ROLES:
            value = str((node.get("value") or {}).get("value") or "")
            ours = our_value(line)
            if ours is None or ours.rstrip("0").rstrip(".") != value.rstrip("0").rstrip(".") and ours != value:
                states_ok = False
                tally.differences.append(Difference(page, line.role, line.name, "value", str(ours), value))
        tally.states_agree += states_ok
    # What Chromium calls interactive must have a ref too, except the parts of a date or time
    # field, which live in the field's own user-agent shadow tree (the field is read as one).
    inside_fields = _descendants(nodes, lambda n: chromium_role(n) in FIELD_ROLES)
    refs_dropped = "of them with refs;" in text  # the budget hid some refs: recall cannot be judged
    for node in nodes if not refs_dropped else ():
        backend = int(node.get("backendDOMNodeId") or 0)
        if (node.get("ignored") or not backend or backend in seen or chromium_role(node) not in INTERACTIVE_ROLES
                or node["nodeId"] in inside_fields):
            continue
        tally.nodes += 1
        tally.differences.append(Difference(page, chromium_role(node), chromium_name(node), "ref", "no ref", "interactive"))
    # Landmarks, as (role, name) in both trees.
    theirs = Counter((chromium_role(n), chromium_name(n)) for n in nodes
                     if not n.get("ignored") and chromium_role(n) in LANDMARK_ROLES)
    ours = Counter((line.role, line.name) for line in lines if line.role in LANDMARK_ROLES)
    for key in theirs | ours:
        matched = min(theirs[key], ours[key])
        tally.nodes += max(theirs[key], ours[key])
        tally.role_agree += matched
        tally.name_agree += matched
        tally.states_agree += matched
        for _ in range(max(theirs[key], ours[key]) - matched):
            tally.differences.append(Difference(page, key[0], key[1], "landmark", str(ours[key]), str(theirs[key])))
    return tally


async def agreement(port: int, url_part: str, page: str, text: str) -> Tally:
    """Compare the snapshot `text` of the page whose URL contains `url_part` with Chromium's tree."""
    session = await AXSession.open(port, url_part)
    try:
        refs = [line.ref for line in parse(text) if line.ref]
        backend_of = await session.backend_ids(refs)
        nodes = await session.ax_nodes()
    finally:
        await session.close()
    return compare(page, text, nodes, backend_of)
