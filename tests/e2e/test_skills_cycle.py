"""The whole life of a skill and a plugin against the real host in headless Chromium: installed
with the command line while the host runs, listed in the model's instructions, loaded by the
model from a task in the side panel (no question asked), and removed again; a plugin's rules in
force from its install to its uninstall."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.skills.builders import SAMPLE_PLUGIN, SAMPLE_SKILL
from tests.support.fake_model import Reply
from tests.support.hosts import control_call
from tests.support.sidepanel_site import open_site

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    with open_site(tmp_path_factory.mktemp("skills-cycle"), "skills-cycle") as site:
        yield site


def cli(site, *args):
    env = {**os.environ, "TABWARDEN_HOME": str(site.run.tw_home), "NO_COLOR": "1"}
    done = subprocess.run([sys.executable, "-m", "host", *args], capture_output=True, text=True, env=env,
                          stdin=subprocess.DEVNULL, timeout=90)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


def system_prompt(request) -> str:
    return next(m["content"] for m in request["body"]["messages"] if m["role"] == "system")


def test_install_list_load_and_uninstall_a_skill(site):
    from playwright.sync_api import expect

    assert cli(site, "skill", "add", str(SAMPLE_SKILL)).startswith("installed price-compare")
    # The running host took it (the CLI went through its control socket, not around it).
    listed = control_call(site.run.tw_home, "skills.list")
    assert [s["name"] for s in listed["skills"]] == ["price-compare"] and listed["promptChars"] > 0

    site.model.replies.clear()
    site.model.add(Reply(text="Loading the skill.", tool_calls=[("load_skill", {"name": "price-compare"})]),
                   Reply(text="Compared: the kettle is cheapest at the first shop."))
    before = len(site.model.requests)
    site.new_task("Where is this kettle cheapest?")
    panel = site.panel
    expect(panel.locator(".item.assistant").last).to_contain_text("Compared: the kettle is cheapest")
    expect(panel.locator(".approval")).to_have_count(0)  # load_skill never asks
    first, second = site.model.requests[before:before + 2]
    assert "- price-compare: Compare the price of one product" in system_prompt(first)
    assert "load_skill" in [t["function"]["name"] for t in first["body"]["tools"]]
    result = next(m for m in second["body"]["messages"] if m["role"] == "tool")["content"]
    assert result.startswith('Skill "price-compare" (sha256 ') and "# Comparing a product's price" in result
    site.shot(panel, "load-skill-card")

    cli(site, "skill", "remove", "price-compare")
    site.model.add(Reply(text="No skills now."))
    before = len(site.model.requests)
    site.new_task("Anything installed?")
    expect(panel.locator(".item.assistant").last).to_contain_text("No skills now.")
    request = site.model.requests[before]
    assert "\nSkills\n" not in system_prompt(request)
    assert "load_skill" not in [t["function"]["name"] for t in request["body"].get("tools", [])]


def test_a_plugins_rules_hold_from_install_to_uninstall(site):
    def explain(**kw):
        return control_call(site.run.tw_home, "gatekeeper.explain", tool="click", params={"ref": "s1"},
                            origin="https://www.klarna.com", policy="auto", **kw)

    assert explain()["verdict"] == "allow"
    out = cli(site, "plugin", "add", str(SAMPLE_PLUGIN), "--yes")
    assert "rule: effect:pay @ * -> ask" in out and "installed plugin careful-shopper" in out
    assert explain()["code"] == "guarded_origin"
    rules = control_call(site.run.tw_home, "gatekeeper.rules")
    assert any(r.get("provenance") == "injected:plugin:careful-shopper" for r in rules)
    cli(site, "plugin", "remove", "careful-shopper")
    assert explain()["verdict"] == "allow"
    assert control_call(site.run.tw_home, "skills.list")["skills"] == []
