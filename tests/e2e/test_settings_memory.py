"""The settings page's memory section in headless Chromium (Playwright) against the real host.

An entry added, edited and deleted from the page is what the host's memory holds (read back over
the control socket, as the REPL does); a long value is folded with a way to see all of it; a
refused change (a value over the limit, a key of spaces, a full memory) is shown beside the form
and the typed text stays; the model's write during a task and a change from the REPL appear
without a reload; clearing everything asks first. The limits are shrunk in builtins.json (3
entries, values up to 300 characters) so the refusals are quick to reach.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from typing import Any

import pytest

from install.extension_id import default_extension_id
from tests.support.browser import ROOT, BrowserRun
from tests.support.fake_model import FakeOpenAI, Reply
from tests.support.hosts import control_call, write_settings
from tests.support.playwright_run import extension_context

pytestmark = pytest.mark.browser

SHOTS = ROOT / "test-output" / "settings-memory"
WAIT_MS = 30_000
MAX_ENTRIES = 3
MAX_CHARS = 300


@dataclass
class Site:
    run: BrowserRun
    model: FakeOpenAI
    page: Any

    def control(self, method: str, **params: Any) -> Any:
        """One control-socket call, as the REPL makes it."""
        return control_call(self.run.tw_home, method, **params)

    def memory(self) -> dict[str, tuple[str, str]]:
        """The host's memory: key -> (value, who wrote it last)."""
        return {e["key"]: (e["value"], e["source"]) for e in self.control("memory.list")}

    def row(self, key: str) -> Any:
        return self.page.locator(f"#memory tbody tr[data-key='{key}']")

    def add(self, key: str, value: str) -> None:
        self.page.fill("#memory-key", key)
        self.page.fill("#memory-value", value)
        self.page.locator("#memory").get_by_role("button", name="Add to memory").click()

    def shot(self, name: str) -> None:
        SHOTS.mkdir(parents=True, exist_ok=True)
        self.page.locator("#memory").scroll_into_view_if_needed()
        for scheme in ("light", "dark"):
            self.page.emulate_media(color_scheme=scheme)
            self.page.locator("#memory").screenshot(path=str(SHOTS / f"{name}-{scheme}.png"))
        self.page.emulate_media(color_scheme="light")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=WAIT_MS)
    folder = tmp_path_factory.mktemp("settings-memory")
    with FakeOpenAI() as model:
        run = BrowserRun(folder / "run")
        run.prepare()
        write_settings(run.tw_home, model.url)
        (run.tw_home / "config" / "builtins.json").write_text(json.dumps({"memoryMaxEntries": MAX_ENTRIES,
                                                                          "memoryMaxValueChars": MAX_CHARS}))
        with sync_playwright() as playwright, \
                extension_context(playwright, run, {"width": 1100, "height": 900}) as context:
            page = context.new_page()
            page.goto(f"chrome-extension://{default_extension_id()}/ui/settings.html")
            page.wait_for_selector("#memory[aria-busy=false]", timeout=WAIT_MS)
            yield Site(run, model, page)


@pytest.fixture
def empty(site):
    """Every test starts from an empty memory and an idle form."""
    from playwright.sync_api import expect

    site.control("memory.clear")
    expect(site.page.locator("#memory tbody")).to_contain_text("Nothing is saved in memory.")
    cancel = site.page.locator("#memory form button", has_text="Cancel")
    if cancel.is_visible():
        cancel.click()
    site.page.fill("#memory-filter", "")
    site.page.fill("#memory-key", "")
    site.page.fill("#memory-value", "")
    return site


def test_an_entry_is_added_edited_and_deleted_from_the_page(empty):
    from playwright.sync_api import expect

    site, page = empty, empty.page
    section = page.locator("#memory")
    site.add("shirt size", "M")
    row = site.row("shirt size")
    expect(row).to_contain_text("M")
    expect(row).to_contain_text("by you")
    expect(page.locator("#memory [role=status]")).to_have_text("Added “shirt size”.")
    expect(page.locator("#memory-key")).to_have_value("")  # the form is ready for the next one
    expect(page.locator("#memory-summary")).to_have_text(f"1 of {MAX_ENTRIES} entries. A value holds at most {MAX_CHARS} characters.")
    assert site.memory() == {"shirt size": ("M", "user")}

    # Edit: the key is fixed, the value is replaced.
    section.get_by_role("button", name="Edit the memory “shirt size”").click()
    expect(page.locator("#memory-form-title")).to_have_text("Edit “shirt size”")
    expect(page.locator("#memory-key")).to_have_attribute("readonly", "")
    expect(page.locator("#memory-value")).to_have_value("M")
    expect(page.locator("#memory-value")).to_be_focused()
    page.fill("#memory-value", "M, or L for coats")
    section.get_by_role("button", name="Save changes").click()
    expect(row.locator("td").nth(1)).to_have_text("M, or L for coats")
    expect(row.locator("td").nth(2)).to_have_text("17")
    expect(page.locator("#memory [role=status]")).to_have_text("Saved “shirt size”.")
    expect(page.locator("#memory-form-title")).to_have_text("Add a memory")
    assert site.memory() == {"shirt size": ("M, or L for coats", "user")}

    # A long value is folded; "Show all" unfolds it in place.
    long = "Ships to the office on weekdays, home at weekends. " * 5
    site.add("delivery", long)
    cell = site.row("delivery").locator(".memory-value")
    toggle = site.row("delivery").get_by_role("button", name=f"Show all ({len(long)} characters)")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(cell).to_have_text(long[:160] + "…")
    toggle.click()
    expect(cell).to_have_text(long)
    less = site.row("delivery").get_by_role("button", name="Show less")
    expect(less).to_have_attribute("aria-expanded", "true")
    expect(less).to_be_focused()
    site.shot("entries")
    less.click()
    expect(cell).to_have_text(long[:160] + "…")

    # Finding an entry by its key or its text.
    page.fill("#memory-filter", "OFFICE")
    expect(site.row("delivery")).to_have_count(1)
    expect(site.row("shirt size")).to_have_count(0)
    expect(page.locator("#memory-summary")).to_contain_text("Showing 1 of 2.")
    page.fill("#memory-filter", "no such thing")
    expect(page.locator("#memory tbody")).to_have_text("No entry matches “no such thing”.")
    page.fill("#memory-filter", "")
    expect(site.row("shirt size")).to_have_count(1)
    expect(site.row("delivery")).to_have_count(1)

    section.get_by_role("button", name="Delete the memory “delivery”").click()
    expect(site.row("delivery")).to_have_count(0)
    expect(page.locator("#memory [role=status]")).to_have_text("Deleted “delivery”.")
    assert site.memory() == {"shirt size": ("M, or L for coats", "user")}


def test_refusals_are_shown_beside_the_form_and_keep_the_typed_text(empty):
    from playwright.sync_api import expect

    site, page = empty, empty.page
    section = page.locator("#memory")
    error = page.locator("#memory-error")
    # A value over the limit: the counter warns, the host refuses, the text stays.
    too_long = "x" * (MAX_CHARS + 1)
    page.fill("#memory-key", "notes")
    page.fill("#memory-value", too_long)
    expect(page.locator("#memory-count")).to_have_text(f"{MAX_CHARS + 1} of {MAX_CHARS} characters")
    expect(page.locator("#memory-count")).to_have_class(re.compile(r"\bbad\b"))
    section.get_by_role("button", name="Add to memory").click()
    expect(section.get_by_role("alert").filter(has_text="Not saved")).to_have_text(
        f"Not saved: the value has {MAX_CHARS + 1} characters; a value holds at most {MAX_CHARS}. Shorten it and save again.")
    expect(page.locator("#memory-value")).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#memory-value")).to_be_focused()
    expect(page.locator("#memory-value")).to_have_value(too_long)
    expect(page.locator("#memory-key")).to_have_value("notes")
    assert site.memory() == {}
    # Fixed and saved: the error goes.
    page.press("#memory-value", "Backspace")
    expect(error).to_have_text("")
    expect(page.locator("#memory-value")).not_to_have_attribute("aria-invalid", "true")
    section.get_by_role("button", name="Add to memory").click()
    expect(site.row("notes")).to_have_count(1)
    assert site.memory() == {"notes": ("x" * MAX_CHARS, "user")}

    # A key of spaces only.
    site.add("   ", "kept")
    expect(error).to_have_text(re.compile("^Not saved: a key is 1 to 100 characters"))
    expect(page.locator("#memory-key")).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#memory-value")).to_have_value("kept")

    # A full memory: the REPL fills it (the page follows), then the page's add is refused.
    site.control("memory.set", key="city", value="Arlington")
    site.control("memory.set", key="seat", value="aisle")
    expect(site.row("seat")).to_contain_text("aisle")
    expect(page.locator("#memory-summary")).to_contain_text(f"{MAX_ENTRIES} of {MAX_ENTRIES} entries")
    site.add("pet", "a cat called Ada")
    expect(error).to_have_text(f"Not saved: memory is full ({MAX_ENTRIES} entries). Delete an entry first, or edit an existing one.")
    expect(page.locator("#memory-key")).to_have_value("pet")
    expect(page.locator("#memory-value")).to_have_value("a cat called Ada")
    site.shot("memory-full")
    assert sorted(site.memory()) == ["city", "notes", "seat"]
    # Room again: the same typed entry goes in.
    section.get_by_role("button", name="Delete the memory “notes”").click()
    expect(site.row("notes")).to_have_count(0)
    section.get_by_role("button", name="Add to memory").click()
    expect(site.row("pet")).to_contain_text("a cat called Ada")
    expect(error).to_have_text("")
    assert sorted(site.memory()) == ["city", "pet", "seat"]


def test_the_models_write_during_a_task_appears_without_a_reload(empty):
    from playwright.sync_api import expect

    site = empty
    site.model.replies.clear()
    site.model.add(Reply(tool_calls=[("memory_write", {"key": "seat", "value": "aisle, never middle"})]),
                   Reply(text="Noted."))
    created = site.control("engine.op", op={"type": "thread.create", "submissionId": uuid.uuid4().hex,
                                            "permissionPolicy": "auto"})
    site.control("engine.op", op={"type": "turn.submit", "submissionId": uuid.uuid4().hex,
                                  "threadId": created["threadId"], "input": {"text": "I like the aisle seat"}})
    row = site.row("seat")
    expect(row).to_contain_text("aisle, never middle")
    expect(row).to_contain_text("by the model")
    assert site.memory() == {"seat": ("aisle, never middle", "model")}


def test_clear_all_asks_first(empty):
    from playwright.sync_api import expect

    site, page = empty, empty.page
    section = page.locator("#memory")
    site.add("city", "Arlington")
    expect(site.row("city")).to_have_count(1)
    site.add("seat", "aisle")
    expect(site.row("seat")).to_have_count(1)
    clear_all = section.get_by_role("button", name="Clear all memory…")
    confirm = section.get_by_role("group", name="Delete all 2 entries? This cannot be undone.")
    # Asked, then kept.
    clear_all.click()
    expect(confirm).to_be_visible()
    keep = confirm.get_by_role("button", name="Keep them")
    expect(keep).to_be_focused()
    site.shot("clear-confirm")
    keep.click()
    expect(confirm).to_be_hidden()
    expect(clear_all).to_be_focused()
    assert sorted(site.memory()) == ["city", "seat"]
    # Asked, then cleared.
    clear_all.click()
    confirm.get_by_role("button", name="Delete all").click()
    expect(page.locator("#memory tbody")).to_have_text("Nothing is saved in memory.")
    expect(page.locator("#memory [role=status]")).to_have_text("Memory cleared.")
    expect(clear_all).to_be_disabled()
    assert site.memory() == {}
