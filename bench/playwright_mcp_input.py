"""Input through Playwright MCP's own tools: `@playwright/mcp` from npm, driving its own headless
Chromium, called over MCP the way an agent calls it (`browser_press_key`, `browser_click`,
`browser_type`), each timed from the call to its answer, on the same quiet page as ours. It is the
peer of our tool calls, as Playwright's library calls are the floor under them. Its answers carry
what it read of the page after the input, as ours do.
"""

from __future__ import annotations

import re
import time
from typing import Any

from bench.common import ref_on_line
from bench.playwright_mcp import answer_text, with_playwright_mcp

_REF = re.compile(r"\[ref=([a-z0-9]+)\]")


def _ref(snapshot: str, part: str) -> str:
    return ref_on_line(snapshot, part, _REF)


def playwright_mcp_input(page_url: str, runs: int) -> dict[str, list[float]] | str:
    """Seconds per call of Playwright MCP's press_key, click and type on `page_url`; or why it
    could not be measured (offline, no npx)."""

    async def measure(connection: Any) -> dict[str, list[float]]:
        samples: dict[str, list[float]] = {"browser_press_key": [], "browser_click": [], "browser_type": []}

        async def timed(tool: str, params: dict) -> None:
            started = time.perf_counter()
            answer = await connection.call(tool, params)
            samples[tool].append(time.perf_counter() - started)
            assert not answer.get("isError"), answer_text(answer)[:400]

        async def snapshot() -> str:
            return answer_text(await connection.call("browser_snapshot", {}))

        await connection.call("browser_navigate", {"url": page_url})
        for run in range(runs + 2):  # the first two warm up
            # The slider takes the focus (a click on it), then the timed key goes to it.
            await connection.call("browser_click", {"element": "Level slider", "target": _ref(await snapshot(), 'slider "Level"')})
            await timed("browser_press_key", {"key": "ArrowRight"})
            await timed("browser_click", {"element": "Add one button", "target": _ref(await snapshot(), 'button "Add one"')})
            await timed("browser_type", {"element": "Name field", "target": _ref(await snapshot(), 'textbox "Name"'),
                                         "text": f"Grace Hopper {run}"})
        return {tool: values[2:] for tool, values in samples.items()}

    return with_playwright_mcp(measure)
