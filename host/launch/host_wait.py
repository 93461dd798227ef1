"""Waiting for the native host that *our* browser started: among the published hosts, the one
that appeared after the launch and, where the OS can tell, lives in the browser's process group
(the host inherits it). A user's everyday browser may run its own host at the same time."""

from __future__ import annotations

import asyncio
import os
import time

from host.control.client import ControlClient
from host.control.discovery import HostEntry, running_hosts
from host.launch.browser_process import BrowserProcess
from host.launch.errors import LaunchError
from host.transport.errors import RequestError

POLL_S = 0.1


class HostNotConnected(LaunchError):
    """The browser's host did not come up; the message says what was seen."""


def started_by(entry: HostEntry, browser_pid: int, since: float) -> bool:
    """Whether a published host belongs to the browser with `browser_pid`, started at `since`."""
    if entry.started_at < since:
        return False
    if not hasattr(os, "getpgid"):
        return True  # Windows: no process groups to compare; the newest host after launch it is
    try:
        return os.getpgid(entry.pid) == browser_pid
    except OSError:
        return False


async def wait_for_host(browser: BrowserProcess, since: float, timeout: float) -> dict:
    """Wait until our browser's host has finished its handshake; returns its `host.info`."""
    deadline = time.monotonic() + timeout
    last_error = "no host has published a control endpoint yet"
    while time.monotonic() < deadline:
        if not browser.alive():
            raise HostNotConnected("the browser exited before its host connected")
        for entry in running_hosts():
            if not started_by(entry, browser.pid, since):
                continue
            try:
                client = await ControlClient.connect_to(entry, client="launch")
            except (RequestError, OSError) as exc:
                last_error = f"host {entry.pid}: {exc}"
                continue
            try:
                remaining = max(1.0, deadline - time.monotonic())
                return await client.request("host.wait_ready", {"timeout": remaining}, timeout=remaining + 1)
            except RequestError as exc:
                last_error = f"host {entry.pid}: {exc}"
            finally:
                await client.close()
        await asyncio.sleep(POLL_S)
    raise HostNotConnected(f"no host connected within {timeout:g} s ({last_error})")
