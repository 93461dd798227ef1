"""Page snapshots as the extension's page executor sends them, for every fake that plays the
extension or scripts a page read.

The executor (extension/content/snapshot.js) writes the format, and the host has no single
declaration of it; it reads it in these places, which this module has to agree with:

- the fields: `PageSnapshot` and `SnapshotRef` in host/browser/wire.py. Snapshots are built
  through those structs, so a field the host does not know fails here, not in a test.
- the ids: `s<document token>_<snapshot number>` for a snapshot and `<that>_<n>` for its refs,
  in host/browser/refmap.py (refs of another snapshot are dropped) and host/browser/diff.py.
- the text: a four-line header (`# Page Snapshot (<id>)`, `URL: ...`, `Title: ...`, a blank
  line), then one line per node, `- role "name" [ref=<ref>]` for the ones with refs: the diff in
  host/browser/diff.py, the approval's target line in host/browser/described.py and the REPL's
  colouring in host/repl/render.py.
"""

from __future__ import annotations

from typing import Any, Iterable, Union

import msgspec

from host.browser.wire import PageSnapshot, SnapshotRef

# (role, name) or (role, name, input type) of an element that gets a ref.
Element = Union[tuple[str, str], tuple[str, str, str]]


def snapshot_id(token: str, number: int) -> str:
    """The id of snapshot `number` of the document `token` (`s<token>_<number>`)."""
    return f"s{token}_{number}"


def ref_line(role: str, name: str, ref: str) -> str:
    """The snapshot line of an element with a ref."""
    return f'- {role} "{name}" [ref={ref}]'


def snapshot_text(token: str, number: int, lines: Iterable[str], *, url: str, title: str) -> str:
    """A snapshot's text: the header, then `lines` as given."""
    return "\n".join([f"# Page Snapshot ({snapshot_id(token, number)})", f"URL: {url}", f"Title: {title}", "",
                      "\n".join(lines)])


def snapshot(token: str, number: int, *elements: Element, url: str = "http://site.test/a",
             title: str = "A") -> dict[str, Any]:
    """A snapshot as the page executor sends it (the JSON of `PageSnapshot`), with one ref per
    element, numbered from 1 in order. A textbox is an `input` element, and a textbox named
    "Password" is a password field unless the element gives its input type."""
    label = snapshot_id(token, number)
    refs = [_ref(f"{label}_{index}", element) for index, element in enumerate(elements, 1)]
    text = snapshot_text(token, number, [ref_line(r.role, r.name, r.ref) for r in refs], url=url, title=title)
    wire = msgspec.to_builtins(PageSnapshot(id=label, doc_token=token, snapshot_id=number, text=text, refs=refs,
                                            ref_count=len(refs)))
    # The executor leaves out the hints an element does not have.
    wire["refs"] = [{key: value for key, value in ref.items() if value is not None} for ref in wire["refs"]]
    return wire


def _ref(ref: str, element: Element) -> SnapshotRef:
    role, name = element[0], element[1]
    input_type = element[2] if len(element) > 2 else ("password" if name == "Password" else None)
    return SnapshotRef(ref=ref, role=role, name=name, tag="input" if role == "textbox" else role,
                       input_type=input_type)
