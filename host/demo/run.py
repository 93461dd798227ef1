"""`tabwarden demo` from start to end: a throw-away Tabwarden home (the user's rules, audit log
and providers are never touched), the two local sites and the replay model, then a launch whose
"REPL" is the story."""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass

from host.paths import HOME_ENV

BANNER = ("Tabwarden demo. The agent is a REPLAY of a fixed script served on 127.0.0.1, not an AI model: "
          "no account and no network are needed.\nEvery step it takes goes through the real gatekeeper.")


@dataclass
class DemoOptions:
    approve: str = "ask"  # accept | decline | ask
    headed: bool = False
    browser: str | None = None


def run_demo(options: DemoOptions) -> int:
    """Run the demo; returns the exit code (0 when the audit trail is the expected one)."""
    home = tempfile.mkdtemp(prefix="tw-demo-", dir="/tmp" if os.path.isdir("/tmp") else None)
    saved = {name: os.environ.get(name) for name in (HOME_ENV, "TABWARDEN_DEMO_REPLAY_KEY")}
    os.environ[HOME_ENV] = home
    os.environ["TABWARDEN_DEMO_REPLAY_KEY"] = "replay"
    try:
        return _run(options)
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        shutil.rmtree(home, ignore_errors=True)


def _run(options: DemoOptions) -> int:
    from host.demo.replay_model import ReplayModel
    from host.demo.sites import LocalSite
    from host.demo.story import Stage, run_story
    from host.launch.runner import LaunchOptions, launch
    from host.repl.style import Style

    print(BANNER, flush=True)
    with LocalSite("shop.html") as shop, LocalSite("bank.html") as bank, ReplayModel(bank.url) as model:
        stage = Stage(shop, bank, model, options.approve)
        launch_options = LaunchOptions(browser=options.browser, headless=not options.headed,
                                       site_access=["http://127.0.0.1/*"], url=shop.url)
        return launch(launch_options, repl=lambda pid, note="": run_story(pid, stage, Style()))
