"""Wording shared by the browser tools' results: the notices and dividers the model learns to
read, and the dialogs a page opened. (The result type itself is `host.tools.result.ToolResult`.)"""

from __future__ import annotations

import json
from typing import Any

UNSTABLE_NOTICE = "[page may not have fully loaded]"
SNAPSHOT_DIVIDER = "--- incremental snapshot ---"
NEW_PAGE_DIVIDER = "--- new page snapshot ---"


def dialog_lines(dialogs: list[dict[str, Any]] | None) -> str:
    """"The page opened N dialog(s): ..." for the dialogs the patch intercepted ("" if none)."""
    if not dialogs:
        return ""
    parts = []
    for dialog in dialogs[:20]:
        kind = str(dialog.get("kind", "dialog"))
        message = str(dialog.get("message", ""))[:200]
        if kind == "confirm":
            outcome = "auto-cancelled (returned false)"
        elif kind == "prompt":
            outcome = "auto-cancelled (returned null)"
        else:
            outcome = "closed"
        parts.append(f"- {kind}({json.dumps(message, ensure_ascii=False)}): {outcome}")
    return f"The page opened {len(dialogs)} dialog(s):\n" + "\n".join(parts)
