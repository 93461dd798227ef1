"""The settings page's Skills and Plugins sections, and `@` skill mentions in the side panel, in
headless Chromium against the real host.

Skills are installed by path and from a .zip picked in the page; a bad zip is refused with the
host's reason and adds nothing; a switch turns one off; a copy edited on disk shows its changed
files and is used again once approved. A plugin is shown whole on a review panel before Install,
its MCP server switched on, and Uninstall takes everything it added. In the composer `@pri`
offers the skill, and the message sent carries the skill's instructions as the host filled them.
Screenshots at 360 and 460 px, light and dark, in test-output/settings-skills/.
"""

from __future__ import annotations

import json

import pytest

from tests.skills.builders import SAMPLE_PLUGIN, SAMPLE_SKILL, write_skill, zip_members, zip_of
from tests.support.fake_model import Reply
from tests.support.sidepanel_site import open_site

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    with open_site(tmp_path_factory.mktemp("settings-skills"), "settings-skills") as site:
        site.settings = site.extension_page("settings.html")
        site.settings.wait_for_selector("#skills[aria-busy=false]")
        yield site


def shots(site, section: str, name: str) -> None:
    page = site.settings
    for width in (360, 460):
        page.set_viewport_size({"width": width, "height": 900})
        page.locator(section).scroll_into_view_if_needed()
        for scheme in ("light", "dark"):
            site.shots.mkdir(parents=True, exist_ok=True)
            page.emulate_media(color_scheme=scheme)
            page.locator(section).screenshot(path=str(site.shots / f"{name}-{width}-{scheme}.png"))
    page.emulate_media(color_scheme="light")
    page.set_viewport_size({"width": 460, "height": 900})


def skill_item(page, name):
    return page.locator(f"#skills li.skill[data-name='{name}']")


def test_skills_are_installed_switched_approved_and_removed(site, tmp_path):
    from playwright.sync_api import expect

    page = site.settings
    section = page.locator("#skills")
    page.fill("#skill-path", str(SAMPLE_SKILL))
    section.get_by_role("button", name="Install").click()
    expect(section.locator("#skills-status")).to_have_text("Installed price-compare.")
    expect(skill_item(page, "price-compare")).to_contain_text("In use")
    expect(section.locator("#skills-cost")).to_contain_text("of 8000 characters of the model's instructions")

    notes = write_skill(tmp_path, "meeting-notes", description="Turn a meeting page into notes.",
                        files={"scripts/run.sh": "echo hi\n"})
    zipped = tmp_path / "meeting-notes.zip"
    zipped.write_bytes(zip_of(notes, prefix="meeting-notes/"))
    page.set_input_files("#skill-zip", str(zipped))
    section.get_by_role("button", name="Install").click()
    item = skill_item(page, "meeting-notes")
    expect(item).to_contain_text("Installed from meeting-notes.zip")
    expect(item).to_contain_text("Has scripts, which Tabwarden never runs")

    bad = tmp_path / "bad.zip"
    bad.write_bytes(zip_members([("x/SKILL.md", b"---\nname: x\ndescription: d\n---\nx"), ("x/../evil.md", b"!")]))
    page.set_input_files("#skill-zip", str(bad))
    section.get_by_role("button", name="Install").click()
    expect(section.locator("#skills-status")).to_contain_text("Not installed:")
    expect(section.locator("#skills-status")).to_contain_text("x/../evil.md")
    expect(section.locator("li.skill")).to_have_count(2)

    page.fill("#skill-path", str(SAMPLE_SKILL))
    section.get_by_role("button", name="Install").click()
    expect(section.locator("#skills-status")).to_contain_text("A skill with this name is installed already.")
    section.get_by_role("button", name="Replace the installed one").click()
    expect(section.locator("#skills-status")).to_contain_text("Installed")

    item.get_by_role("checkbox", name="Use meeting-notes").uncheck()
    expect(item).to_contain_text("Off")
    skill_item(page, "price-compare").get_by_role("button", name="View the instructions of price-compare").click()
    expect(skill_item(page, "price-compare").locator(".skill-body")).to_contain_text("Comparing a product's price")
    shots(site, "#skills", "skills")

    copy = site.run.tw_home / "data" / "extensions" / "skills" / "price-compare" / "SKILL.md"
    copy.write_text(copy.read_text() + "\nAlso check the returns policy.\n")
    page.reload()
    page.wait_for_selector("#skills[aria-busy=false]")
    changed = skill_item(page, "price-compare")
    expect(changed).to_contain_text("Changed on disk")
    expect(changed).to_contain_text("Not used until you approve these files as they are now: SKILL.md")
    shots(site, "#skills", "skills-changed")
    changed.get_by_role("button", name="Approve the changed files of price-compare").click()
    expect(changed).to_contain_text("In use")

    item.get_by_role("button", name="Remove meeting-notes").click()
    item.locator(".confirm").get_by_role("button", name="Remove").click()
    expect(section.locator("#skills-status")).to_have_text("Removed meeting-notes.")
    expect(section.locator("li.skill")).to_have_count(1)


def test_a_plugin_is_reviewed_installed_switched_and_uninstalled(site, tmp_path):
    from playwright.sync_api import expect

    plugin = tmp_path / "careful-shopper"
    import shutil

    shutil.copytree(SAMPLE_PLUGIN, plugin)
    manifest = json.loads((plugin / "plugin.json").read_text())
    manifest["mcpServers"] = {"price-history": {"type": "http", "url": "http://127.0.0.1:9/mcp"}}
    (plugin / "plugin.json").write_text(json.dumps(manifest))
    page = site.settings
    section = page.locator("#plugins")
    page.fill("#plugin-path", str(plugin))
    section.get_by_role("button", name="Review").click()
    review = section.locator(".plugin-review")
    expect(review).to_be_visible()
    expect(review.locator("h3")).to_have_text("Install careful-shopper 1.0.0?")
    for words in ("checkout-review", "price-history", "http://127.0.0.1:9/mcp", "effect:pay", "*.klarna.com",
                  "*.afterpay.com", "*.affirm.com", "By Tabwarden"):
        expect(review).to_contain_text(words)
    expect(review.locator(".adds").nth(2).locator("li")).to_have_count(2)  # its two rules
    assert site.settings.locator("#plugins li.plugin").count() == 0  # nothing installed by a review
    shots(site, "#plugins", "plugin-review")
    review.get_by_role("button", name="Install").click()
    installed = section.locator("li.plugin[data-name='careful-shopper']")
    expect(installed).to_contain_text("checkout-review")
    expect(installed.locator(".badge")).to_have_count(0)  # as reviewed: nothing changed on disk
    expect(skill_item(page, "checkout-review")).to_contain_text("From the plugin careful-shopper")
    expect(skill_item(page, "checkout-review").get_by_role("button", name="Remove checkout-review")).to_have_count(0)
    switch = installed.get_by_role("checkbox", name="Run price-history")
    expect(switch).not_to_be_checked()
    switch.check()
    expect(switch).to_be_checked()
    page.locator("#origins").scroll_into_view_if_needed()
    expect(page.locator("#origins")).to_contain_text("from the plugin careful-shopper")
    shots(site, "#plugins", "plugins")
    installed.get_by_role("button", name="Uninstall careful-shopper").click()
    installed.locator(".confirm").get_by_role("button", name="Uninstall").click()
    expect(section.locator("#plugins-status")).to_have_text("Uninstalled careful-shopper.")
    expect(section.locator("li.plugin")).to_have_count(0)
    expect(skill_item(page, "checkout-review")).to_have_count(0)
    expect(page.locator("#origins")).not_to_contain_text("careful-shopper")


def test_an_at_mention_attaches_the_skill_the_host_fills_in(site):
    from playwright.sync_api import expect

    site.settings.locator("#skills li.skill").first.wait_for()  # price-compare from the first test
    panel = site.panel
    panel.reload()
    panel.wait_for_selector("body[data-engine=ready]")
    site.model.replies.clear()
    site.model.add(Reply(text="Comparing with the skill."))
    before = len(site.model.requests)
    site.form.bring_to_front()
    panel.bring_to_front()
    panel.click("#new-thread")
    panel.fill("#message", "Find the best price @pri")
    menu = panel.locator("#skill-menu")
    expect(menu).to_be_visible()
    expect(menu.get_by_role("option")).to_have_text(["@price-compare Compare the price of one product across several "
                                                    "shops the user names or has open, including shipping and delivery "
                                                    "time, and report a table. Use when the user asks where something is "
                                                    "cheapest or wants offers compared."])
    site.shot(panel, "mention-menu")
    panel.press("#message", "Enter")
    expect(panel.locator(".composer .chip")).to_contain_text("Skill price-compare")
    expect(panel.locator("#message")).to_have_value("Find the best price ")
    site.shot(panel, "mention-chip")
    panel.press("#message", "Enter")
    expect(panel.locator(".item.assistant").last).to_contain_text("Comparing with the skill.")
    expect(panel.locator(".composer .chip")).to_have_count(0)
    request = site.model.requests[before]
    user = next(m for m in request["body"]["messages"] if m["role"] == "user")
    text = user["content"] if isinstance(user["content"], str) else " ".join(
        p.get("text", "") for p in user["content"] if isinstance(p, dict))
    assert '[Tabwarden context: kind=skill label="price-compare"' in text
    assert "# Comparing a product's price across shops" in text and "Find the best price" in text
