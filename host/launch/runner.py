"""One `tabwarden launch`, start to finish:

    find the browser -> prepare the profile and run folder -> register the host for the profile
    -> start the browser (extension by flag or over the debugging pipe) -> wait for our host
    -> REPL -> stop everything we started (unless --keep) -> remove the run folder
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from host.launch import profile
from host.launch.browser_process import BrowserProcess
from host.launch.errors import LaunchError
from host.launch.find_browser import FoundBrowser, find_browser
from host.launch.flags import browser_argv
from host.launch.host_wait import wait_for_host

LOAD_VIA = ("auto", "flag", "pipe")
RUN_MARKER_ENV = "TABWARDEN_LAUNCH_RUN"
LOG_TAIL_LINES = 15


@dataclass
class LaunchOptions:
    browser: str | None = None  # a key (chromium, chrome, edge, brave) or a path; None: the first found
    headless: bool = False
    keep: bool = False  # leave the browser running after the REPL ends
    profile: Path | None = None  # default: <data dir>/profiles/<browser>
    extension: Path | None = None  # default: the bundled unpacked extension
    site_access: list[str] = field(default_factory=list)  # match patterns granted up front
    load_via: str = "auto"  # flag (--load-extension), pipe (debugging pipe), auto: pipe for Chrome only
    url: str = "about:blank"
    host_timeout: float = 30.0


def loads_via_pipe(option: str, browser: FoundBrowser) -> bool:
    """Whether to load the extension over the debugging pipe (branded Chrome ignores the flag)."""
    if option not in LOAD_VIA:
        raise LaunchError(f"--load-via must be one of {', '.join(LOAD_VIA)}")
    wanted = option == "pipe" or (option == "auto" and browser.key == "chrome")
    if wanted and sys.platform == "win32":
        if option == "pipe":
            raise LaunchError("--load-via pipe is not available on Windows")
        raise LaunchError("Google Chrome ignores --load-extension and the debugging-pipe route is not available "
                          "on Windows: use Chromium, Edge or Brave (--browser)")
    return wanted


def no_display(platform: str = sys.platform, env: dict[str, str] | None = None) -> bool:
    """True on Linux (and other X11/Wayland systems) when there is no display to show a window on."""
    env = os.environ if env is None else env
    if platform in ("win32", "darwin"):
        return False
    return not (env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"))


def browser_env(dirs: profile.LaunchDirs) -> dict[str, str]:
    """The browser's environment: ours, with temporary files kept in the run folder. The host
    inherits it, which is how leftovers are recognised (their environment names the run folder)."""
    env = dict(os.environ)
    for name in ("TMPDIR", "TMP", "TEMP"):
        env[name] = str(dirs.tmp)
    env[RUN_MARKER_ENV] = str(dirs.run)  # the same mark, should anything rewrite the temp variables
    return env


@contextmanager
def termination_as_exit() -> Iterator[None]:
    """SIGTERM and SIGHUP end the launch like Ctrl-D does, so the browser is stopped too."""
    def leave(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    previous = {}
    for name in ("SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is not None:
            previous[sig] = signal.signal(sig, leave)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(none)"
    return "\n".join(text.rstrip("\n").split("\n")[-lines:]) or "(empty)"


def launch(options: LaunchOptions, say: Callable[[str], None] = print,
           repl: Callable[..., int] | None = None) -> int:
    """Run one launch; returns the exit code. `repl(pid, note=...)` defaults to the debug REPL."""
    from install.extension_id import default_extension_id
    from install.installer import InstallError, install
    from protocol.bundle import BundleError

    try:
        found = find_browser(options.browser)
        via_pipe = loads_via_pipe(options.load_via, found)
    except LaunchError as exc:
        say(f"tabwarden launch: {exc}")
        return 2
    try:
        patterns = [profile.site_access_pattern(p) for p in options.site_access]
    except LaunchError as exc:
        say(f"tabwarden launch: {exc}")
        return 2
    if not options.headless and no_display():
        say("no display found (DISPLAY and WAYLAND_DISPLAY are unset): starting headless instead")
        options.headless = True
    if options.headless and not patterns:
        # Chrome grants site access only from a person's click in the side panel, which a
        # headless browser has nobody to make: say how to grant it before the first read fails.
        say("headless: no side panel can grant site access, so page tools work only where --site-access grants it "
            "up front, e.g. make launch LAUNCH_ARGS=\"--site-access https://example.com\", or where the REPL's "
            "tw.grant_site('https://example.com') adds it")
    dirs = profile.prepare(found.key, options.profile)
    holder = profile.profile_in_use(dirs.profile)
    if holder is not None:
        say(f"tabwarden launch: browser pid {holder} already uses {dirs.profile} (a launch with --keep?); "
            "stop it, or pass --profile DIR")
        profile.remove_run(dirs)
        return 1
    try:
        extension = (options.extension or profile.bundled_extension()).resolve()
        copied = bool(patterns) or options.headless
        if copied:
            # A copy of its own: its manifest holds the sites granted up front, and a headless
            # run's REPL can add more to it (`tw.grant_site`), where no side panel can.
            extension = profile.extension_with_site_access(extension, dirs.run, patterns)
            profile.allow_unpacked_reload(dirs.profile)
        extension_id = default_extension_id(extension)
        placements = install([found.key], dirs.profile, [extension_id], warn=say)
    except (InstallError, BundleError, OSError, KeyError, ValueError) as exc:
        say(f"tabwarden launch: cannot load the extension or register the host for {dirs.profile}: {exc}")
        profile.remove_run(dirs)
        return 1
    say(f"browser: {found.display} at {found.executable}")
    say(f"profile: {dirs.profile}")
    say(f"run folder: {dirs.run} (removed when the launch ends)")
    say(f"host registered: {', '.join(p.describe() for p in placements)}")
    pipe = None
    if via_pipe:
        from host.launch.cdp_pipe import DebugPipe

        pipe = DebugPipe(keep_open_after_exit=options.keep)
    argv = browser_argv(found.executable, dirs.profile, extension, headless=options.headless, load_via_pipe=via_pipe,
                        start_url=options.url)
    env = browser_env(dirs)
    if copied:
        from host.browser.site_grant import EXTENSION_COPY_ENV

        env[EXTENSION_COPY_ENV] = str(extension)  # the host inherits it
    browser = BrowserProcess(argv, env, dirs.browser_log, str(dirs.run), pipe)
    keep = False
    with termination_as_exit():
        try:
            since = time.time() - 1  # host start times come from another process's clock reading
            browser.start(cwd=dirs.run)
            mode = "headless" if options.headless else "headed"
            say(f"started {found.display} pid {browser.pid} ({mode}; extension {extension_id}"
                f"{' loaded over the debugging pipe' if via_pipe else ''})")
            if pipe is not None:
                from host.launch.cdp_pipe import load_unpacked

                loaded = load_unpacked(pipe, str(extension))
                if loaded != extension_id:
                    say(f"warning: the browser gave the extension id {loaded}, not {extension_id}")
            info = asyncio.run(wait_for_host(browser, since, options.host_timeout))
            say(f"host pid {info['pid']} connected (extension {info.get('extensionVersion')}, "
                f"browser session {info.get('browserSessionId')})")
            note = (f"Browser pid {browser.pid} ({found.display}, {mode}) "
                    f"{'stays running after Ctrl-D (--keep)' if options.keep else 'is stopped when you leave'}.")
            if repl is None:
                from host.repl.session import run_repl as repl
            code = repl(info["pid"], note=note)
            keep = options.keep
            return code
        except (LaunchError, OSError) as exc:
            say(f"tabwarden launch: {exc}")
            say(f"--- browser log ({dirs.browser_log}), last lines ---\n{_tail(dirs.browser_log)}")
            from host.paths import dirs as tw_dirs

            say(f"--- host log ({tw_dirs().log / 'host.log'}), last lines ---\n{_tail(tw_dirs().log / 'host.log')}")
            say("check the registration with: tabwarden doctor")
            return 1
        finally:
            _finish(browser, dirs, keep, say)


def _finish(browser: BrowserProcess, dirs: profile.LaunchDirs, keep: bool, say: Callable[[str], None]) -> None:
    if browser.proc is None:
        profile.remove_run(dirs)
        return
    if keep and browser.alive():
        pid = browser.pid
        browser.detach()
        say(f"left {Path(browser.argv[0]).name} pid {pid} running (--keep); its temporary files are in {dirs.run}")
        return
    report = browser.stop()
    how = "quit when asked" if report.quit_when_asked else "had to be killed"
    extra = f"; also ended leftover pids {report.killed_leftovers}" if report.killed_leftovers else ""
    say(f"stopped browser pid {browser.pid} ({how}){extra}")
    profile.remove_run(dirs)
