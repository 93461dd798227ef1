"""Servers of the 2026-07-28 revision announce a changed tool list only on a
`subscriptions/listen` stream: one is kept open while the session lasts (opened again when it
drops), and each change is reported as a `notifications/tools/list_changed` is. Older servers
send that notification instead; a server that refuses the stream is not asked again."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable

log = logging.getLogger("tabwarden.mcp")

# A stream that dropped is opened again after this long, at most this many times in a row
# without an event between.
LISTEN_RETRY_S = 2.0
LISTEN_RETRIES = 5


async def listen_for_changes(client: Any, server_id: str, on_tools_changed: Callable[[], None]) -> None:
    """Keep `client`'s listen stream open until the session ends (cancel the task to stop)."""
    from mcp.client.subscriptions import ListenNotSupportedError, SubscriptionLost
    from mcp.shared.exceptions import MCPError
    from mcp.shared.subscriptions import ToolsListChanged

    failures = 0
    while failures < LISTEN_RETRIES:
        try:
            async with client.listen(tools_list_changed=True) as stream:
                async for event in stream:
                    failures = 0
                    if isinstance(event, ToolsListChanged):
                        on_tools_changed()
            return  # the server closed it gracefully: it has nothing more to tell this session
        except ListenNotSupportedError:
            return
        except MCPError as exc:
            log.info("MCP server %s refused subscriptions/listen: %s", server_id, exc)
            return
        except (SubscriptionLost, TimeoutError, OSError) as exc:
            failures += 1
            log.info("MCP server %s: the subscriptions/listen stream dropped (%s); opening it again", server_id, exc)
        await asyncio.sleep(LISTEN_RETRY_S)
