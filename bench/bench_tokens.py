"""Tokens a model reads over a scripted 30-step task: ours against Playwright MCP in one run.

The task, on generated pages of 1k and 5k elements (sections of prose, links, lists, and a form
row per section: a field, a Save button that writes "Saved <value>" beside it): fill 15 rows
spread over the page, each a `type` then a `click`. Both agents start with the page's navigation
answer and act as a careful agent would with each tool set:

- ours reads the page once (`tab_open` answers without a snapshot), then takes a ref from the
  newest answer that showed its element (refs the page kept stay valid, so an answer that lists
  only what changed is enough) and, for an element it has not seen, asks `find_in_page`;
- Playwright MCP's takes a ref from its newest answer likewise and, for an element it has not
  seen, reads the page again (`browser_snapshot`), as its tools offer no narrower lookup.

Counted: the text of every answer the model reads (navigation, lookups, writes), in characters
and in tokens at 4 characters each (the same measure on both sides). Also printed: each of our
writes' answers (median and largest), to be held to about 1k tokens when a write changed a few
elements. Ratio = ours / Playwright MCP's.

A second, short task on the same pages put inside a <main> that a select-like button hides from
the tree while its list is open (aria-hidden, as Material UI's select and most modals do): open
the list, choose an option, then fill and save the first row with the refs from before. Printed:
its tokens on both sides, and our answer to the choice, when the page behind the list comes back.

    python -m bench.bench_tokens [--rows N]
"""

from __future__ import annotations

import argparse
import asyncio
import re
from typing import Any

from bench.bench_snapshot import generated_page
from bench.common import median, table
from bench.playwright_mcp import answer_text, with_playwright_mcp
from bench.served_browser import served_browser
from tests.support.hosts import attach

SIZES = (1000, 5000)
CHARS_PER_TOKEN = 4
ROW_SCRIPT = """<script>
document.addEventListener("click", (event) => {
  const button = event.target.closest("button");
  const row = button && button.closest(".row");
  if (!row) return;
  let out = row.querySelector("output");
  if (!out) { out = document.createElement("output"); row.appendChild(out); }
  out.textContent = "Saved " + row.querySelector("input").value;
});
</script>"""
POPOVER = """<div id="popover" hidden><ul role="listbox" aria-label="Size">
<li role="option" tabindex="-1">Small</li><li role="option" tabindex="-1">Large</li></ul></div>
<script>
const page = document.getElementById("page"), popover = document.getElementById("popover");
const size = document.getElementById("size");
size.addEventListener("click", () => { page.setAttribute("aria-hidden", "true"); popover.hidden = false; });
for (const option of popover.querySelectorAll("[role=option]")) option.addEventListener("click", () => {
  size.textContent = "Size: " + option.textContent; popover.hidden = true; page.removeAttribute("aria-hidden");
});
</script>"""
POPOVER_STEPS = [("click", 'button "Size: Medium"', ""), ("click", 'option "Large"', ""),
                 ("type", 'textbox "Field 1"', "Value 1"), ("click", 'button "Save 1"', "")]
STALE_PEER_REF = "not found in the current page snapshot"
OUR_REF = re.compile(r"\[ref=(s[0-9a-z]+_\d+_\d+)\]")
PEER_REF = re.compile(r"\[ref=([a-z0-9]+)\]")


def task_page(elements: int) -> str:
    """A generated page of `elements` elements whose Save buttons record their row's value."""
    return generated_page(elements).replace("</body>", ROW_SCRIPT + "</body>")


def popover_page(elements: int) -> str:
    """The task page inside a <main> with a select-like button at its top whose list, while
    open, hides the <main> from the tree."""
    body = '<body><main id="page"><button type="button" id="size" aria-haspopup="listbox">Size: Medium</button>'
    return task_page(elements).replace("<body>", body, 1).replace("</body>", "</main>" + POPOVER + "</body>", 1)


def rows_of(elements: int, count: int) -> list[int]:
    """`count` section numbers spread from the top of the page to near its end."""
    blocks = elements // 20
    step = max(1, (blocks - 2) // count)
    return [1 + step * k for k in range(count)]


def steps_of(rows: list[int]) -> list[tuple[str, str, str]]:
    """(tool, line part, text) per step: type into a row's field, then click its Save."""
    out: list[tuple[str, str, str]] = []
    for row in rows:
        out.append(("type", f'textbox "Field {row}"', f"Value {row}"))
        out.append(("click", f'button "Save {row}"', ""))
    return out


def newest_ref(answers: list[str], part: str, pattern: re.Pattern[str]) -> str | None:
    """The ref on a line containing `part` in the newest answer that has one."""
    for text in reversed(answers):
        for line in text.split("\n"):
            if part in line:
                found = pattern.search(line)
                if found:
                    return found.group(1)
    return None


class Tally:
    """Characters the model read, split by what it read them from."""

    def __init__(self) -> None:
        self.by_kind: dict[str, int] = {}
        self.writes: list[int] = []

    def add(self, kind: str, text: str) -> None:
        self.by_kind[kind] = self.by_kind.get(kind, 0) + len(text)
        if kind == "write":
            self.writes.append(len(text))

    @property
    def total(self) -> int:
        return sum(self.by_kind.values())


async def ours(url: str, steps: list[tuple[str, str, str]]) -> Tally:
    control = await attach(client="bench")
    base = {"thread_id": f"tokens-{len(url)}-{id(steps)}", "policy": "auto"}
    tally = Tally()
    answers: list[str] = []

    async def call(tool: str, kind: str, **params: Any) -> dict:
        result = await control.call("tools.call", tool=tool, params=params, timeout=120, **base)
        assert result["ok"], result
        answers.append(result["text"])
        tally.add(kind, result["text"])
        return result

    try:
        opened = await call("tab_open", "navigation", url=url)
        tab = opened["tabId"]
        await call("read_page", "lookup", tabId=tab)  # what an agent looks at first
        for tool, part, text in steps:
            ref = newest_ref(answers, part, OUR_REF)
            if ref is None:
                await call("find_in_page", "lookup", tabId=tab, query=part.split('"')[1])
                ref = newest_ref(answers, part, OUR_REF)
            assert ref, f"no ref for {part}"
            extra = {"text": text} if text else {}
            await call(tool, "write", tabId=tab, element=part, ref=ref, **extra)
    finally:
        await control.close()
    return tally


def playwright_mcp(url: str, steps: list[tuple[str, str, str]]) -> Tally | str:
    async def work(connection: Any) -> Tally:
        tally = Tally()
        answers: list[str] = []

        async def call(tool: str, kind: str, params: dict) -> bool:
            answer = await connection.call(tool, params)
            text = answer_text(answer)
            tally.add(kind, text)
            if answer.get("isError"):
                # A ref its last snapshot no longer has: a careful agent reads the page again.
                assert STALE_PEER_REF in text, text[:400]
                return False
            answers.append(text)
            return True

        async def ref_for(part: str, fresh: bool = False) -> str:
            ref = None if fresh else newest_ref(answers, part, PEER_REF)
            if ref is None:
                await call("browser_snapshot", "lookup", {})
                ref = newest_ref(answers, part, PEER_REF)
            assert ref, f"no ref for {part}"
            return ref

        await call("browser_navigate", "navigation", {"url": url})
        for tool, part, text in steps:
            params = {"element": part, "target": await ref_for(part)}
            if text:
                params["text"] = text
            if not await call(f"browser_{tool}", "write", params):
                params["target"] = await ref_for(part, fresh=True)
                assert await call(f"browser_{tool}", "write", params), part
        return tally

    return with_playwright_mcp(work)


def tokens(chars: int) -> int:
    return round(chars / CHARS_PER_TOKEN)


def report(size: int, mine: Tally, peer: Tally | str) -> list[list[object]]:
    rows = []
    for kind in ("navigation", "lookup", "write"):
        theirs = peer.by_kind.get(kind, 0) if isinstance(peer, Tally) else None
        rows.append([f"{size}: {kind}", tokens(mine.by_kind.get(kind, 0)),
                     tokens(theirs) if theirs is not None else "-", ""])
    theirs_total = peer.total if isinstance(peer, Tally) else None
    ratio = f"{mine.total / theirs_total:.2f}" if theirs_total else "-"
    rows.append([f"{size}: whole task", tokens(mine.total), tokens(theirs_total) if theirs_total else "-", ratio])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=15, help="rows filled per page (two steps each)")
    args = parser.parse_args()
    pages = {f"task{size}.html": task_page(size) for size in SIZES}
    pages.update({f"popover{size}.html": popover_page(size) for size in SIZES})
    plans = {size: steps_of(rows_of(size, args.rows)) for size in SIZES}
    mine: dict[int, Tally] = {}
    mine_popover: dict[int, Tally] = {}
    with served_browser(pages) as (server, _run):
        urls = {size: server.url(f"task{size}.html") for size in SIZES}
        popover_urls = {size: server.url(f"popover{size}.html") for size in SIZES}
        for size in SIZES:
            mine[size] = asyncio.run(ours(urls[size], plans[size]))
            mine_popover[size] = asyncio.run(ours(popover_urls[size], POPOVER_STEPS))
        peers: dict[int, Tally | str] = {}
        peers_popover: dict[int, Tally | str] = {}
        for size in SIZES:
            peers[size] = playwright_mcp(urls[size], plans[size])
            peers_popover[size] = playwright_mcp(popover_urls[size], POPOVER_STEPS)
    rows: list[list[object]] = []
    for size in SIZES:
        rows.extend(report(size, mine[size], peers[size]))
    print(f"Tokens read over a {2 * args.rows}-step task (characters / {CHARS_PER_TOKEN}); ratio = ours / Playwright MCP")
    print(table(["page: answers", "ours", "Playwright MCP", "ratio"], rows))
    print()
    write_rows = [[size, tokens(median(mine[size].writes)), tokens(max(mine[size].writes)), len(mine[size].writes)]
                  for size in SIZES]
    print("Our write answers, each (tokens):")
    print(table(["page elements", "median", "largest", "writes"], write_rows))
    print()
    rows = []
    for size in SIZES:
        rows.extend(report(size, mine_popover[size], peers_popover[size]))
    print(f"Tokens read over the {len(POPOVER_STEPS)}-step task with a list over the page; ratio = ours / Playwright MCP")
    print(table(["page: answers", "ours", "Playwright MCP", "ratio"], rows))
    print("Our answer to choosing the option (the page behind the list back), tokens: "
          + ", ".join(f"{size} elements {tokens(mine_popover[size].writes[1])}" for size in SIZES))
    for size in SIZES:
        for name, peer in (("task", peers[size]), ("list task", peers_popover[size])):
            if isinstance(peer, str):
                print(f"{size}, {name}: {peer}")


if __name__ == "__main__":
    main()
