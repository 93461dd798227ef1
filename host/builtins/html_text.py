"""HTML to readable Markdown (or plain text), with the standard library's `html.parser`.

The page is parsed into a small tree (bounded depth, forgiving about unclosed tags), the
readable part is chosen (the first `<main>`, else `<article>`, else `<body>`, with navigation,
footers, asides, scripts, styles, forms' hidden parts and embedded objects dropped), and it is
written out as blocks: headings, paragraphs, lists, quotes, code, tables, links with absolute
URLs. It is not a browser: no CSS, no script, no layout; hidden text may show, which is why the
result is fenced as untrusted page content like every other page text.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import urljoin

MAX_DEPTH = 200

VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
                  "track", "wbr"})
SKIPPED = frozenset({"script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "embed",
                     "head", "select", "button", "input", "textarea", "math", "audio", "video", "map", "dialog"})
CHROME = frozenset({"nav", "footer", "aside", "header", "form"})
BLOCK = frozenset({"p", "div", "section", "article", "main", "header", "footer", "blockquote", "pre", "ul", "ol", "li",
                   "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tfoot", "tr", "td", "th", "hr",
                   "dl", "dt", "dd", "figure", "figcaption", "address", "details", "summary", "body", "html",
                   "nav", "aside", "form", "fieldset", "center", "caption"})
# A new one of these closes an open one of the same group (HTML's implied end tags, simplified).
IMPLIED_CLOSE = {"p": {"p"}, "li": {"li"}, "dt": {"dt", "dd"}, "dd": {"dt", "dd"}, "tr": {"tr", "td", "th"},
                 "td": {"td", "th"}, "th": {"td", "th"}, "option": {"option"}}
SCOPE_LIMIT = frozenset({"ul", "ol", "table", "dl", "div", "section", "article", "main", "body", "blockquote"})
_BR = "\u2028"  # a line break inside inline text, kept through whitespace collapsing
_SPACE = re.compile(r"[ \t\r\n\f\v\u00a0]+")


@dataclass
class Node:
    tag: str
    attrs: dict[str, str] = field(default_factory=dict)
    children: list["Node | str"] = field(default_factory=list)


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#root")
        self.stack: list[Node] = [self.root]
        self.title = ""
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        closes = IMPLIED_CLOSE.get(tag)
        if closes:
            for index in range(len(self.stack) - 1, 0, -1):
                open_tag = self.stack[index].tag
                if open_tag in closes:
                    del self.stack[index:]
                    break
                if open_tag in SCOPE_LIMIT:
                    break
        node = Node(tag, {k: v or "" for k, v in attrs})
        parent = self.stack[-1]
        parent.children.append(node)
        if tag not in VOID and len(self.stack) < MAX_DEPTH:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(Node(tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        for index in range(len(self.stack) - 1, 0, -1):
            if self.stack[index].tag == tag:
                del self.stack[index:]
                return

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        self.stack[-1].children.append(data)


def _find(node: Node, tag: str, skip: frozenset[str] = SKIPPED) -> Node | None:
    """The first `tag` element, breadth first, not looking inside `skip` elements."""
    pending = deque([node])
    while pending:
        current = pending.popleft()
        if current.tag == tag:
            return current
        pending.extend(c for c in current.children if isinstance(c, Node) and c.tag not in skip)
    return None


def _hidden(node: Node) -> bool:
    style = node.attrs.get("style", "").replace(" ", "").lower()
    return ("hidden" in node.attrs or node.attrs.get("aria-hidden") == "true" or "display:none" in style
            or (node.tag == "input" and node.attrs.get("type") == "hidden"))


class _Writer:
    def __init__(self, base_url: str, markdown: bool):
        self.base = base_url
        self.md = markdown

    # -- inline ---------------------------------------------------------------------------------

    def inline(self, node: Node | str) -> str:
        if isinstance(node, str):
            return node
        if node.tag in SKIPPED or _hidden(node):
            return ""
        if node.tag == "br":
            return _BR
        if node.tag == "img":
            alt = _SPACE.sub(" ", node.attrs.get("alt", "")).strip()
            src = node.attrs.get("src", "")
            if not alt:
                return ""
            return f"![{alt}]({self._url(src)})" if self.md and src and not src.startswith("data:") else alt
        inner = "".join(self.inline(c) for c in node.children)
        if not self.md or not inner.strip():
            return inner
        if node.tag == "a":
            href = node.attrs.get("href", "").strip()
            if href and not href.lower().startswith(("javascript:", "data:", "vbscript:", "#")):
                return f"[{_collapse(inner)}]({self._url(href)})"
            return inner
        if node.tag in ("strong", "b"):
            return f"**{inner.strip()}**"
        if node.tag in ("em", "i"):
            return f"*{inner.strip()}*"
        if node.tag == "code":
            return f"`{inner.strip()}`"
        return inner

    def _url(self, href: str) -> str:
        try:
            return urljoin(self.base, href).replace(" ", "%20").replace(")", "%29")
        except ValueError:
            return href

    # -- blocks ---------------------------------------------------------------------------------

    def blocks(self, node: Node, depth: int = 0) -> list[str]:
        out: list[str] = []
        run: list[Node | str] = []

        def flush() -> None:
            text = _collapse("".join(self.inline(c) for c in run))
            if text:
                out.append(text)
            run.clear()

        for child in node.children:
            if isinstance(child, Node) and (child.tag in BLOCK or child.tag in SKIPPED):
                flush()
                if child.tag not in SKIPPED and not _hidden(child):
                    out.extend(self.block(child, depth))
            else:
                run.append(child)
        flush()
        return out

    def block(self, node: Node, depth: int) -> list[str]:
        tag = node.tag
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            text = _collapse("".join(self.inline(c) for c in node.children))
            return [("#" * int(tag[1]) + " " + text) if self.md else text] if text else []
        if tag == "hr":
            return ["---"] if self.md else []
        if tag == "pre":
            text = "".join(_raw(c) for c in node.children).strip("\n")
            return [f"```\n{text}\n```" if self.md else text] if text.strip() else []
        if tag == "blockquote":
            inner = "\n\n".join(self.blocks(node, depth))
            return ["\n".join("> " + line if line else ">" for line in inner.split("\n"))] if inner else []
        if tag in ("ul", "ol"):
            return [self.list(node, depth)] if node.children else []
        if tag == "table":
            table = self.table(node)
            return [table] if table else []
        return self.blocks(node, depth)

    def list(self, node: Node, depth: int) -> str:
        lines = []
        number = int(node.attrs.get("start", "1")) if node.attrs.get("start", "").isdigit() else 1
        for child in node.children:
            if not isinstance(child, Node) or child.tag != "li" or _hidden(child):
                continue
            marker = f"{number}. " if node.tag == "ol" else "- "
            number += 1
            body = "\n".join(self.blocks(child, depth + 1)) or ""
            pad = " " * len(marker)
            first, *rest = body.split("\n") if body else [""]
            lines.append(marker + first)
            lines.extend(pad + line if line else line for line in rest)
        return "\n".join(lines)

    def _cell(self, cell: Node) -> str:
        text = _collapse("".join(self.inline(c) for c in cell.children)).replace("\n", " ")
        return text.replace("|", "\\|") if self.md else text

    def table(self, node: Node) -> str:
        rows: list[list[str]] = []
        pending = deque([node])
        while pending:
            current = pending.popleft()
            for child in current.children:
                if not isinstance(child, Node):
                    continue
                if child.tag == "tr":
                    cells = [self._cell(cell)
                             for cell in child.children if isinstance(cell, Node) and cell.tag in ("td", "th")]
                    if any(cells):
                        rows.append(cells)
                elif child.tag in ("thead", "tbody", "tfoot"):
                    pending.append(child)
        if not rows:
            return ""
        if not self.md:
            return "\n".join(" | ".join(r) for r in rows)
        width = max(len(r) for r in rows)
        rows = [r + [""] * (width - len(r)) for r in rows]
        lines = ["| " + " | ".join(rows[0]) + " |", "|" + " --- |" * width]
        lines.extend("| " + " | ".join(r) + " |" for r in rows[1:])
        return "\n".join(lines)


def _raw(node: Node | str) -> str:
    if isinstance(node, str):
        return node
    if node.tag == "br":
        return "\n"
    return "".join(_raw(c) for c in node.children)


def _collapse(text: str) -> str:
    text = _SPACE.sub(" ", text)
    return "\n".join(line.strip() for line in text.split(_BR)).strip()


def _drop_chrome(node: Node) -> None:
    node.children = [c for c in node.children if not (isinstance(c, Node) and c.tag in CHROME)]
    for child in node.children:
        if isinstance(child, Node):
            _drop_chrome(child)


@dataclass(frozen=True)
class Readable:
    """A page as readable text: its title and the Markdown (or plain text) body."""

    title: str
    text: str


def html_to_text(html: str, base_url: str = "", *, markdown: bool = True) -> Readable:
    """The readable part of an HTML document as Markdown (or plain text when `markdown` is
    False). Links and images get absolute URLs against `base_url` (or the page's `<base>`)."""
    builder = _Builder()
    try:
        builder.feed(html)
        builder.close()
    except (AssertionError, ValueError):  # html.parser gives up on a few malformed constructs
        pass
    root = builder.root
    base = _find(root, "base", frozenset())
    if base is not None and base.attrs.get("href"):
        base_url = urljoin(base_url, base.attrs["href"])
    chosen = _find(root, "main") or _find(root, "article")
    if chosen is None:
        chosen = _find(root, "body") or root
        _drop_chrome(chosen)
    text = "\n\n".join(_Writer(base_url, markdown).blocks(chosen))
    return Readable(_collapse(builder.title), re.sub(r"\n{3,}", "\n\n", text).strip())
