"""`tabwarden doctor`: check every registration the way the browser would use it.

Each failed check says what is wrong in the words Chrome would log, and the command that
fixes it.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from protocol.constants import HOST_NAME
from protocol.framing import FrameSplitter, browser_encoder, extension_decoder
from protocol.bundle import BundleError
from protocol.messages import Ping, Pong

from install import installation, registrations
from install.extension_id import default_extension_id, origin_of
from install.installer import Environment

# How long the host may take to start and answer a ping: a cold start on a slow or busy machine
# takes well over a second, and a host that is merely slow is not a broken one.
PING_TIMEOUT_S = 5.0


@dataclass
class Check:
    subject: str
    name: str
    ok: bool
    detail: str = ""
    fix: str = ""


def _install_cmd(entry: dict[str, Any]) -> str:
    cmd = f"tabwarden install --browser {entry.get('browser', 'chromium')}"
    if entry.get("user_data_dir"):
        cmd += f" --user-data-dir '{entry['user_data_dir']}'"
    return cmd


def check_entry(entry: dict[str, Any], envr: Environment, timeout: float = PING_TIMEOUT_S) -> list[Check]:
    """All checks for one recorded registration, stopping at the first that makes the rest moot."""
    subject = entry.get("browser", "?") + (f" ({entry['user_data_dir']})" if entry.get("user_data_dir") else "")
    fix = _install_cmd(entry)
    checks: list[Check] = []

    def add(name: str, ok: bool, detail: str = "", fix_cmd: str = "") -> bool:
        checks.append(Check(subject, name, ok, detail, "" if ok else (fix_cmd or fix)))
        return ok

    manifest = Path(entry.get("manifest_path", ""))
    if not add("manifest exists", manifest.is_file(),
               f"{manifest} is missing: Chrome reports \"Specified native messaging host not found.\""
               if not manifest.is_file() else str(manifest)):
        return checks
    try:
        doc = json.loads(manifest.read_text(encoding="utf-8"))
        parsed = isinstance(doc, dict)
    except (OSError, ValueError) as exc:
        doc, parsed = {}, False
        add("manifest parses", False, f"{manifest}: {exc}")
        return checks
    if not add("manifest parses", parsed and doc.get("name") == HOST_NAME and doc.get("type") == "stdio",
               "" if parsed and doc.get("name") == HOST_NAME and doc.get("type") == "stdio"
               else f"expected name {HOST_NAME!r} and type 'stdio', found {doc.get('name')!r} / {doc.get('type')!r}"):
        return checks
    launcher_path = Path(str(doc.get("path", "")))
    runnable = launcher_path.is_absolute() and launcher_path.is_file() and (
        envr.family == "win32" or os.access(launcher_path, os.X_OK)
    )
    if not add("launcher runnable", runnable,
               str(launcher_path) if runnable else
               f"{launcher_path} is missing, relative or not executable: Chrome reports \"Native host has exited.\""):
        return checks
    if not _installation_check(add, launcher_path, envr):
        return checks
    wanted = origin_of(default_extension_id())
    origins = doc.get("allowed_origins") or []
    add("extension allowed", wanted in origins,
        wanted if wanted in origins else f"allowed_origins {origins} lacks {wanted}: Chrome reports "
        "\"Access to the specified native messaging host is forbidden.\"")
    if entry.get("registry_key"):
        registry = envr.the_registry()
        value = registry.get_default(entry["registry_key"]) if registry else None
        add("registry key", value == str(manifest),
            f"HKCU\\{entry['registry_key']} = {value!r}" + ("" if value == str(manifest) else f", expected {manifest}"))
    ok, detail = ping_host(launcher_path, wanted, timeout)
    add("host answers ping", ok, detail)
    return checks


def _installation_check(add: Callable[..., bool], launcher_path: Path, envr: Environment) -> bool:
    # Names the installation the launcher runs (and whether it is this one); fails when it is
    # unknown or its interpreter is gone, as after deleting the checkout or venv it lived in.
    runs = installation.of_launcher(launcher_path)
    if runs is None:
        return add("runs installation", False, f"{launcher_path} names no Tabwarden installation")
    this = installation.current(envr.python)
    if not runs.is_present():
        return add("runs installation", False,
                   f"{runs.describe()}: that interpreter is gone, so Chrome reports \"Native host has exited.\"")
    if runs.id == this.id:
        return add("runs installation", True, f"this installation: {runs.describe()}")
    return add("runs installation", True, f"another installation: {runs.describe()}; this doctor runs from {this.location}")


def ping_host(launcher_path: Path, origin: str, timeout: float = PING_TIMEOUT_S) -> tuple[bool, str]:
    """Start the host as the browser would, send a ping frame, expect a pong within `timeout`."""
    return asyncio.run(_ping(launcher_path, origin, timeout))


async def _ping(launcher_path: Path, origin: str, timeout: float) -> tuple[bool, str]:
    started = time.perf_counter()
    try:
        proc = await asyncio.create_subprocess_exec(
            str(launcher_path), origin,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            cwd=str(launcher_path.parent),
        )
    except OSError as exc:
        return False, f"cannot start {launcher_path}: {exc}"
    assert proc.stdin and proc.stdout and proc.stderr

    async def exited() -> tuple[bool, str]:
        err = (await proc.stderr.read()).decode(errors="replace").strip()
        return False, "the host exited without answering: Chrome reports \"Native host has exited.\"" + (
            f" stderr: {err[-400:]}" if err else "")

    try:
        try:
            for frame in browser_encoder().encode(Ping(id=1)):
                proc.stdin.write(frame)
            await proc.stdin.drain()
        except (ConnectionError, BrokenPipeError):
            return await exited()  # it was gone before it could read the ping
        splitter, decoder = FrameSplitter(), extension_decoder()
        deadline = started + timeout
        while True:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                return False, f"no pong within {timeout:g} s"
            data = await asyncio.wait_for(proc.stdout.read(65536), remaining)
            if not data:
                return await exited()
            for payload in splitter.feed(data):
                message = decoder.decode(payload)
                if isinstance(message, Pong) and message.id == 1:
                    elapsed = (time.perf_counter() - started) * 1000
                    return True, f"pong in {elapsed:.0f} ms"
    except asyncio.TimeoutError:
        return False, f"no pong within {timeout:g} s"
    except Exception as exc:  # a bad frame is exactly what Chrome chokes on
        return False, f"the host wrote something that is not a valid frame ({exc}): Chrome reports " \
                      "\"Error when communicating with the native messaging host.\""
    finally:
        if proc.stdin and not proc.stdin.is_closing():
            proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), 3)
        except asyncio.TimeoutError:
            proc.kill()
            await proc.wait()


def run(envr: Environment | None = None, timeout: float = PING_TIMEOUT_S) -> list[Check]:
    """Checks for every recorded registration (one failing check when there are none)."""
    envr = envr or Environment()
    try:
        default_extension_id()
    except BundleError as exc:
        return [Check("tabwarden", "extension installed", False, exc.message,
                      "reinstall Tabwarden (pipx install --force <wheel>, or pip install into its venv)")]
    entries = registrations.load()
    if not entries:
        return [Check("tabwarden", "registered", False, "no registration recorded",
                      "tabwarden install   (or: tabwarden install --user-data-dir DIR for a dedicated profile)")]
    checks: list[Check] = []
    for entry in entries:
        checks.extend(check_entry(entry, envr, timeout))
    return checks

