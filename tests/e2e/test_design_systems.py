"""Widgets of real design systems from npm (pinned: `tests/support/design_systems.py`), driven as
an agent does, with `read_page` alone: components that set their role, name and states through
ElementInternals (Fluent UI's web components, Material Web's radios and tabs), and React ones
(Material UI, Radix UI's primitives) read as Chromium reads them, are acted on by ref, and their
new states show in the write's answer. Each outcome is checked in the page itself. The packages
are installed with npm into a cache folder (the React pages bundled with esbuild from there);
without npm or the registry the module is skipped, except where the browser tests are required."""

from __future__ import annotations

import re

import pytest

from tests.support.ax_agreement import Tally, agreement
from tests.support.browser import browser_required
from tests.support.browser_tools import Site, browser_site, module_fixtures, new_driver, ref_of
from tests.support.cdp import debugging_port
from tests.support.design_systems import PackagesUnavailable, served_root
from tests.support.pages import FIXTURES

pytestmark = pytest.mark.browser

PAGES = FIXTURES / "design"


def design_site(run_dir):
    try:
        root = served_root(PAGES, run_dir / "served")
    except PackagesUnavailable as exc:
        if browser_required():
            pytest.fail(f"the design-system packages could not be installed: {exc}", pytrace=False)
        pytest.skip(f"the design-system packages could not be installed: {exc}")
    return browser_site(run_dir, ["http://127.0.0.1/*"], root=root)


site, driver = module_fixtures(design_site, new_driver, "design-systems")


def line_of(text: str, line_part: str) -> str:
    """The first snapshot line containing `line_part`, stripped of its ref and focus marks."""
    for line in text.split("\n"):
        if line_part in line:
            return re.sub(r" \[ref=[^\]]+\]( \[(focused|active)\])?", "", line).strip()
    raise AssertionError(f"no line containing {line_part!r} in:\n{text}")


async def open_design(driver, page: str) -> str:
    """Open `design/<page>.html` once its components are defined (a React page's rendered); its
    read_page text."""
    await driver.open(f"{page}.html")
    for _ in range(50):
        ready = await driver.evaluate(f"{page}.html", "!!document.querySelector('main') && "
                                      "[...document.querySelectorAll(':not(:defined)')]"
                                      ".filter((el) => el.localName.includes('-')).length === 0")
        if ready:
            break
    return (await driver.read())["text"]


async def in_page(driver, page: str, expression: str):
    return await driver.evaluate(f"{page}.html", expression)


def shows(text: str, lines: dict[str, str]) -> None:
    """For each `part: line`, the first snapshot line containing `part` reads `line` (refs aside)."""
    for part, line in lines.items():
        assert line_of(text, part) == line, text


async def clicked(driver, text: str, line_part: str, element: str, now: str) -> dict:
    """Click the element on the line of `text` containing `line_part`; its answer shows `now`."""
    answer = await driver.ok("click", element=element, ref=ref_of(text, line_part))
    assert now in answer["text"], answer["text"]
    return answer


async def agrees_with_chromium(driver, page: str, text: str) -> Tally:
    tally = await agreement(debugging_port(driver.site.run.profile), f"{page}.html", page, text)
    print(f"{page}: {tally.summary()}")
    assert not tally.differences, tally.differences
    return tally


async def test_fluent_components_read_and_act_by_their_internals(driver):
    text = await open_design(driver, "fluent")
    # Roles, names and states set only through ElementInternals, as Chromium has them.
    assert line_of(text, '"Airplane mode"') == '- switch "Airplane mode" [checked=false]', text
    assert line_of(text, '"Send me product news"') == '- checkbox "Send me product news"', text
    assert line_of(text, '"Text size"') == '- radiogroup "Text size"', text
    assert line_of(text, '"Medium"') == '- radio "Medium" [checked]', text
    assert line_of(text, '"Volume"') == '- slider "Volume" [value=5] [min=0] [max=10]', text
    assert line_of(text, '"General"') == '- tab "General" [selected]', text
    assert line_of(text, '"Save settings"') == '- button "Save settings"', text
    assert (await agrees_with_chromium(driver, "fluent", text)).nodes >= 10
    switched = await driver.ok("click", element="Airplane mode", ref=ref_of(text, 'switch "Airplane mode"'))
    assert 'switch "Airplane mode" [checked]' in switched["text"], switched["text"]
    checked = await driver.ok("click", element="Product news", ref=ref_of(text, 'checkbox "Send me product news"'))
    assert 'checkbox "Send me product news" [checked]' in checked["text"], checked["text"]
    chosen = await driver.ok("click", element="Large", ref=ref_of(text, 'radio "Large"'))
    # (This version of the group leaves Medium checked too, in its internals and in Chromium's tree.)
    assert 'radio "Large" [checked]' in chosen["text"], chosen["text"]
    # This version's slider never takes the focus (no tabindex unless disabled changes): keys
    # asked for on it are refused before any is sent, saying what to do instead.
    volume = await in_page(driver, "fluent", "document.getElementById('volume').value")
    slid = await driver.call("press_key", key="ArrowRight", ref=ref_of(text, 'slider "Volume"'))
    assert not slid["ok"] and slid["error"]["code"] == "not_focusable", slid
    assert "no key was sent" in slid["error"]["message"] and not slid["error"]["details"]["dispatched"], slid
    assert await in_page(driver, "fluent", "document.getElementById('volume').value") == volume
    tab = await driver.ok("click", element="Privacy", ref=ref_of(text, 'tab "Privacy"'))
    assert 'tab "Privacy" [selected]' in tab["text"], tab["text"]
    await driver.ok("click", element="Save settings", ref=ref_of(text, 'button "Save settings"'))
    status = await in_page(driver, "fluent", "document.getElementById('status').textContent")
    assert status == f"Saved: airplane on, volume {volume}", status
    assert await in_page(driver, "fluent", "document.querySelector('fluent-radio[value=large]').checked") is True
    # Read again, the page is as the answers said.
    again = (await driver.read())["text"]
    assert line_of(again, '"Airplane mode"') == '- switch "Airplane mode" [checked]', again
    await agrees_with_chromium(driver, "fluent", again)


async def test_material_radios_and_tabs_read_by_their_internals_and_labels(driver):
    text = await open_design(driver, "material")
    assert line_of(text, '"Music"') == '- tab "Music" [selected]', text
    assert line_of(text, '"Podcasts"') == '- tab "Podcasts"', text
    # A radio named by the label element that wraps it (the labels of its internals).
    assert line_of(text, '"Normal"') == '- radio "Normal" [checked]', text
    assert line_of(text, '"High fidelity"') == '- radio "High fidelity"', text
    await agrees_with_chromium(driver, "material", text)
    tab = await driver.ok("click", element="Podcasts", ref=ref_of(text, 'tab "Podcasts"'))
    assert 'tab "Podcasts" [selected]' in tab["text"], tab["text"]
    chosen = await driver.ok("click", element="High fidelity", ref=ref_of(text, 'radio "High fidelity"'))
    assert 'radio "High fidelity" [checked]' in chosen["text"], chosen["text"]
    # md-switch keeps its role on an element of its shadow root, which the wrapping label does not
    # name (Chromium's tree has it unnamed too).
    switched = await driver.ok("click", element="Shuffle switch", ref=ref_of(text, "- switch [checked=false]"))
    assert "- switch [checked] [ref=" in switched["text"], switched["text"]
    await driver.ok("click", element="Play", ref=ref_of(text, 'button "Play"'))
    status = await in_page(driver, "material", "document.getElementById('status').textContent")
    assert status == "Playing Podcasts at high quality, shuffle on", status


async def test_the_internals_link_gives_a_page_nothing_to_find_or_steer(driver):
    await open_design(driver, "fluent")
    # The page tries to learn the link's name (a second hello), and to link a name of its own.
    await in_page(driver, "fluent", """(() => {
        window.heard = [];
        document.addEventListener("tabwarden-internals-hello", (e) => window.heard.push(String(e.detail)), true);
        window.addEventListener("x".repeat(32), () => window.heard.push("asked"), true);
        document.dispatchEvent(new CustomEvent("tabwarden-internals-hello", { detail: "x".repeat(32) }));
        document.dispatchEvent(new CustomEvent("tabwarden-internals-ready"));
        return true;
    })()""")
    text = (await driver.read())["text"]
    assert line_of(text, '"Airplane mode"') == '- switch "Airplane mode" [checked=false]', text
    assert await in_page(driver, "fluent", "window.heard") == ["x" * 32]  # only its own hello
    # attachInternals keeps its name and length; nothing of ours is on the window.
    assert await in_page(driver, "fluent", "[HTMLElement.prototype.attachInternals.name, "
                                           "HTMLElement.prototype.attachInternals.length, "
                                           "Object.getOwnPropertyNames(window).filter((k) => /tabwarden/i.test(k))]") == \
        ["attachInternals", 0, []]


async def test_material_ui_react_controls_read_and_act_by_ref(driver):
    text = await open_design(driver, "mui")
    # Its switch is a checkbox input (Chromium reads it so); its tabs and buttons are styled
    # uppercase and named so, as Chromium names them.
    shows(text, {'"Wi-Fi"': '- checkbox "Wi-Fi"', '"ACCOUNT"': '- tab "ACCOUNT" [selected]',
                 '"Medium"': '- radio "Medium" [checked]', '- slider "Volume"': '- slider "Volume" [value="30"] [min=0] [max=100]'})
    assert line_of(text, '"Country"').startswith('- combobox "Country" [collapsed]'), text
    await agrees_with_chromium(driver, "mui", text)
    await clicked(driver, text, 'checkbox "Wi-Fi"', "Wi-Fi", 'checkbox "Wi-Fi" [checked]')
    slid = await driver.ok("press_key", key="ArrowRight", repeat=2, ref=ref_of(text, 'slider "Volume"'))
    assert '- slider "Volume" [value="50"] [min=0] [max=100] [ref=' in slid["text"], slid["text"]
    await clicked(driver, text, 'tab "BILLING"', "Billing", 'tab "BILLING" [selected]')
    large = await clicked(driver, text, 'radio "Large"', "Large", 'radio "Large" [checked]')
    # The select opens a listbox in a popover (the page behind it hidden from the tree, as
    # Chromium hides it): its options come with the click's answer, and one is chosen by ref.
    opened = await clicked(driver, text, 'combobox "Country"', "Country", 'listbox "Country"')
    picked = await driver.ok("click", element="Germany", ref=ref_of(opened["text"], 'option "Germany"'))
    assert line_of(picked["text"], 'combobox "Country"').startswith('- combobox "Country" [collapsed]'), picked["text"]
    # The page behind the popover came back with its refs from before, so the answer is told
    # against the snapshot before the popover opened: the country changed, and the rest of the
    # page is not repeated.
    before_popover = re.search(r"# Page Changes \((s[0-9a-z]+_\d+)\)", large["text"]).group(1)
    assert f" since {before_popover}\n" in picked["text"] and 'text: "Germany"' in picked["text"], picked["text"]
    assert ref_of(picked["text"], 'combobox "Country"') == ref_of(text, 'combobox "Country"')
    assert "Wi-Fi" not in picked["text"] and "SAVE" not in picked["text"], picked["text"]
    # A ref from the first read acts as it is once the page behind the popover is back.
    terms = await clicked(driver, text, 'checkbox "I accept the terms"', "terms", 'checkbox "I accept the terms" [checked]')
    assert "recovered" not in terms["text"], terms["text"]
    await driver.ok("click", element="Save", ref=ref_of(text, 'button "SAVE"'))
    status = await in_page(driver, "mui", "document.getElementById('status').textContent")
    assert status == "Saved: wifi on, volume 50, section billing, size large, country de, terms accepted", status
    await agrees_with_chromium(driver, "mui", (await driver.read())["text"])


async def test_radix_primitives_read_and_act_by_ref(driver):
    text = await open_design(driver, "radix")
    # Buttons that play a switch, a checkbox and radios, named by the labels that point at them.
    shows(text, {'"Email alerts"': '- switch "Email alerts" [checked]', '"Weekly digest"': '- checkbox "Weekly digest"',
                 '"Light"': '- radio "Light" [checked]', '"General"': '- tab "General" [selected]',
                 '- slider "Brightness"': '- slider "Brightness" [value=50] [min=0] [max=100]'})
    await agrees_with_chromium(driver, "radix", text)
    await clicked(driver, text, 'switch "Email alerts"', "Email alerts", 'switch "Email alerts" [checked=false]')
    slid = await driver.ok("press_key", key="ArrowLeft", repeat=2, ref=ref_of(text, 'slider "Brightness"'))
    assert '- slider "Brightness" [value=40] [min=0] [max=100] [ref=' in slid["text"], slid["text"]
    tab = await clicked(driver, text, 'tab "Advanced"', "Advanced", 'tab "Advanced" [selected]')
    assert "Advanced settings" in tab["text"], tab["text"]
    await clicked(driver, text, 'checkbox "Weekly digest"', "Weekly digest", 'checkbox "Weekly digest" [checked]')
    await clicked(driver, text, 'radio "Dark"', "Dark", 'radio "Dark" [checked]')
    applied = "Applied: email off, brightness 40, tab advanced, digest on, theme dark"
    await clicked(driver, text, 'button "Apply"', "Apply", applied)
    assert await in_page(driver, "radix", "document.getElementById('status').textContent") == applied
