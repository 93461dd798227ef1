"""One REPL session: attach to a host, print its background events, hand the console a `tw`.

Used by `tabwarden repl` (attach to a running host) and `tabwarden launch` (attach to the host
its browser started).
"""

from __future__ import annotations

import asyncio
import builtins
from typing import Any

from host import __version__
from host.control.client import ControlClient
from host.paths import dirs
from host.repl import line_editing, render
from host.repl.console import AsyncConsole
from host.repl.loop_thread import LoopThread
from host.repl.style import Style
from host.repl.tw import Tabwarden
from host.transport.errors import RequestError

# Events worth interrupting the prompt for; `tw.watch()` shows any others on demand.
BACKGROUND_TOPICS = ("alert", "browser.paused", "approval.*")
HISTORY_FILE = "repl_history"


def run_repl(pid: int | None = None, *, client_name: str = "repl", note: str = "") -> int:
    """Attach to the host with `pid` (or the newest one) and run the console until Ctrl-D.
    Returns 0, or 1 when no host could be reached."""
    runner = LoopThread()
    runner.start()
    try:
        try:
            client = runner.run(ControlClient.connect(pid=pid, client=client_name))
        except (RequestError, OSError) as exc:
            print(f"tabwarden repl: cannot attach: {exc}", flush=True)
            return 1
        style = Style()
        tw = Tabwarden(client, style)
        tw.on_reattach = lambda fresh: _follow_host(fresh, tw)  # a site grant restarts the host
        runner.run(_follow_host(client, tw))
        completer = line_editing.Completer(_namespace(tw), *runner.run(_names(client)))
        save_history = line_editing.setup(completer, dirs().data / HISTORY_FILE)
        console = AsyncConsole(completer.namespace, runner, style)
        try:
            console.interact(_banner(client, note))
        finally:
            save_history()
            runner.run(tw.client.close())
        return 0
    finally:
        runner.stop()


def _namespace(tw: Tabwarden) -> dict[str, Any]:
    return {"__name__": "__console__", "__builtins__": builtins, "tw": tw, "asyncio": asyncio, "render": render}


def _banner(client: ControlClient, note: str) -> str:
    welcome = client.welcome
    lines = [f"Tabwarden {__version__} debug REPL, attached to host pid {welcome.pid}"
             f" (browser session {welcome.browser_session_id or 'none yet'})."]
    if note:
        lines.append(note)
    lines.append("`tw.help()` lists what you can do; top-level `await` works; Ctrl-D leaves.")
    return "\n".join(lines)


async def _names(client: ControlClient) -> tuple[list[str], list[str]]:
    """Tool and method names for completion (empty when the host cannot say)."""
    try:
        methods = await client.call("host.methods", timeout=5)
    except RequestError:
        methods = []
    try:
        tools = [t["name"] for t in await client.call("tools.list", timeout=5)]
    except (RequestError, KeyError, TypeError):
        tools = []
    return tools, methods


async def _follow_host(client: ControlClient, tw: Tabwarden) -> None:
    """Print background events as they arrive (unless a `tw.watch` shows them already), and say
    so when the host goes away."""
    from host.control.topics import any_matches

    wanted = set(BACKGROUND_TOPICS)

    def show(event: Any) -> None:
        if any_matches(wanted, event.topic) and not any_matches(tw.watched, event.topic):
            print("\n" + render.event(event.topic, event.data, tw.style), flush=True)

    client.listen(show)
    try:
        await client.subscribe(*BACKGROUND_TOPICS)
    except RequestError:
        pass

    async def on_close() -> None:
        await client.endpoint.closed.wait()
        if tw.restarting == client.pid:
            print(f"\n[host] host {client.pid} restarts with the extension, which reloads to take the site access; "
                  "attaching to the new host", flush=True)
        elif client.endpoint.close_reason != "client done":
            print(f"\n[host] the connection to host {client.pid} closed ({client.endpoint.close_reason}); "
                  "Ctrl-D to leave", flush=True)

    asyncio.ensure_future(on_close())
