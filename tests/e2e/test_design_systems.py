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
    # Material UI's switch is a checkbox input (Chromium reads it so); its slider an input range.
    assert line_of(text, '"Wi-Fi"') == '- checkbox "Wi-Fi"', text
    # Its tabs and buttons are styled uppercase: named so, as Chromium names them.
    assert line_of(text, '"ACCOUNT"') == '- tab "ACCOUNT" [selected]', text
    assert line_of(text, '"Medium"') == '- radio "Medium" [checked]', text
    assert line_of(text, '"Country"').startswith('- combobox "Country" [collapsed]'), text
    assert line_of(text, 'slider "Volume"').startswith('- slider "Volume"') and "[max=100]" in line_of(text, 'slider "Volume"')
    await agrees_with_chromium(driver, "mui", text)
    switched = await driver.ok("click", element="Wi-Fi", ref=ref_of(text, 'checkbox "Wi-Fi"'))
    assert 'checkbox "Wi-Fi" [checked]' in switched["text"], switched["text"]
    slid = await driver.ok("press_key", key="ArrowRight", repeat=2, ref=ref_of(text, 'slider "Volume"'))
    assert '"50"' in line_of(slid["text"], '- slider "Volume"') or "[value=50]" in slid["text"], slid["text"]
    tab = await driver.ok("click", element="Billing", ref=ref_of(text, 'tab "BILLING"'))
    assert 'tab "BILLING" [selected]' in tab["text"], tab["text"]
    chosen = await driver.ok("click", element="Large", ref=ref_of(text, 'radio "Large"'))
    assert 'radio "Large" [checked]' in chosen["text"], chosen["text"]
    # The select opens a listbox in a popover (the page behind it hidden from the tree, as
    # Chromium hides it): its options come with the click's answer, and one is chosen by ref.
    opened = await driver.ok("click", element="Country", ref=ref_of(text, 'combobox "Country"'))
    assert 'listbox "Country"' in opened["text"], opened["text"]
    picked = await driver.ok("click", element="Germany", ref=ref_of(opened["text"], 'option "Germany"'))
    assert line_of(picked["text"], 'combobox "Country"').startswith('- combobox "Country" [collapsed]'), picked["text"]
    # A ref from the first read still acts once the page behind the popover is back.
    accepted = await driver.ok("click", element="terms", ref=ref_of(text, 'checkbox "I accept the terms"'))
    assert 'checkbox "I accept the terms" [checked]' in accepted["text"], accepted["text"]
    await driver.ok("click", element="Save", ref=ref_of(text, 'button "SAVE"'))
    status = await in_page(driver, "mui", "document.getElementById('status').textContent")
    assert status == "Saved: wifi on, volume 50, section billing, size large, country de, terms accepted", status
    await agrees_with_chromium(driver, "mui", (await driver.read())["text"])


async def test_radix_primitives_read_and_act_by_ref(driver):
    text = await open_design(driver, "radix")
    # Buttons that play a switch, a checkbox and radios, named by the labels that point at them.
    assert line_of(text, '"Email alerts"') == '- switch "Email alerts" [checked]', text
    assert line_of(text, '"Weekly digest"') == '- checkbox "Weekly digest"', text
    assert line_of(text, '"Light"') == '- radio "Light" [checked]', text
    assert line_of(text, 'slider "Brightness"') == '- slider "Brightness" [value=50] [min=0] [max=100]', text
    assert line_of(text, '"General"') == '- tab "General" [selected]', text
    await agrees_with_chromium(driver, "radix", text)
    switched = await driver.ok("click", element="Email alerts", ref=ref_of(text, 'switch "Email alerts"'))
    assert 'switch "Email alerts" [checked=false]' in switched["text"], switched["text"]
    slid = await driver.ok("press_key", key="ArrowLeft", repeat=2, ref=ref_of(text, 'slider "Brightness"'))
    assert "[value=40]" in line_of(slid["text"], '- slider "Brightness"'), slid["text"]
    tab = await driver.ok("click", element="Advanced", ref=ref_of(text, 'tab "Advanced"'))
    assert 'tab "Advanced" [selected]' in tab["text"] and "Advanced settings" in tab["text"], tab["text"]
    checked = await driver.ok("click", element="Weekly digest", ref=ref_of(text, 'checkbox "Weekly digest"'))
    assert 'checkbox "Weekly digest" [checked]' in checked["text"], checked["text"]
    chosen = await driver.ok("click", element="Dark", ref=ref_of(text, 'radio "Dark"'))
    assert 'radio "Dark" [checked]' in chosen["text"], chosen["text"]
    applied = await driver.ok("click", element="Apply", ref=ref_of(text, 'button "Apply"'))
    assert "Applied: email off, brightness 40, tab advanced, digest on, theme dark" in applied["text"], applied["text"]
    assert await in_page(driver, "radix", "document.getElementById('status').textContent") == \
        "Applied: email off, brightness 40, tab advanced, digest on, theme dark"
