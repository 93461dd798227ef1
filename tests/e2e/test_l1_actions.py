"""L1 writes in a real browser: click, type, select_option, hover, press_key (now trusted, L2) and
batch_actions; actionability failures; verification; stale refs and the one strict recovery; the
post-write diff and the operation overlay. Every test checks the tool result and the page."""

from __future__ import annotations

import asyncio
import re
from collections import Counter

import pytest

from tests.support.browser_tools import l1_site, module_fixtures, new_driver, ref_of, worker_injections
from tests.support.cdp import debugging_port, evaluate_in_content_world, page_targets

pytestmark = pytest.mark.browser


site, driver = module_fixtures(l1_site, new_driver, "l1-actions")


async def fresh(driver, page: str) -> str:
    await driver.open(page)
    return (await driver.read())["text"]


async def test_type_then_click_with_verification_and_diff(driver):
    page = await fresh(driver, "form.html")
    typed = await driver.ok("type", element="Full name field", ref=ref_of(page, 'textbox "Full name"'), text="Grace Hopper")
    assert 'Typed "Grace Hopper" into textbox "Full name"' in typed["text"]
    assert typed["details"]["evidence"]["effectState"] == "verified"
    assert typed["details"]["evidence"]["outcome"] == "verified"
    assert "--- incremental snapshot ---\n# Page Changes (" in typed["text"]
    assert re.search(r'- textbox "Full name" \[value="Grace Hopper"\] \[ref=[^\]]+\]( \[focused\])?  \(was: without \[value=',
                     typed["text"].split("Added/changed:")[1]), typed["text"]
    assert "Removed:" not in typed["text"]
    assert await driver.evaluate("form.html", "document.getElementById('name').value") == "Grace Hopper"
    assert await driver.evaluate("form.html", "window.eventLog") == ["name:input", "name:change"]
    # The refs the page kept are not repeated: the read's ref of Save is still good.
    assert 'button "Save"' not in typed["text"] and "Other refs still hold." in typed["text"]
    saved = await driver.ok("click", element="Save button", ref=ref_of(page, 'button "Save"'))
    assert '- text: "Saved Grace Hopper"' in saved["text"]
    assert saved["details"]["evidence"]["outcome"] == "uncertain"  # a click never claims more
    assert await driver.evaluate("form.html", "document.getElementById('status').textContent") == "Saved Grace Hopper"


async def test_append_and_contenteditable_and_same_value(driver):
    page = await fresh(driver, "form.html")
    bio = ref_of(page, 'textbox "Bio"')
    await driver.ok("type", element="Bio", ref=bio, text="Hello")
    page = (await driver.read())["text"]
    await driver.ok("type", element="Bio", ref=ref_of(page, 'textbox "Bio"'), text=" world", mode="append")
    assert await driver.evaluate("form.html", "document.getElementById('bio').value") == "Hello world"
    page = (await driver.read())["text"]
    again = await driver.ok("type", element="Bio", ref=ref_of(page, 'textbox "Bio"'), text="Hello world")
    assert "already held that text" in again["text"] and again["details"]["evidence"]["outcome"] == "uncertain"
    notes = await driver.ok("type", element="Notes", ref=ref_of(page, 'textbox "Notes"'), text="Remember the milk")
    assert notes["ok"]
    assert await driver.evaluate("form.html", "document.getElementById('notes').textContent") == "Remember the milk"


async def form_leads(driver, element_id: str) -> dict:
    """Where the form of `element_id` posts, as the host's expectation carries it."""
    return await driver.evaluate("form.html", f"(() => {{ const f = document.getElementById({element_id!r}).form; "
                                 "return {url: f.action, method: f.method.toUpperCase(), newTab: f.target === '_blank'}; })()")


async def test_typed_passwords_are_not_echoed(driver, site):
    page = await fresh(driver, "form.html")
    # The host knows the ref is a password field: even under `auto` the gatekeeper asks.
    asked = await driver.call("type", element="Password", ref=ref_of(page, 'textbox "Password"'), text="s3cret-value")
    assert not asked["ok"] and asked["error"]["code"] == "approval_required"
    assert "sensitive_payload" in asked["error"]["details"]["flags"]
    assert await driver.evaluate("form.html", "document.getElementById('pw').value") == "hunter2-secret"
    # Through the raw content channel (test hooks), the page executor still never echoes it.
    tab = (await driver.control.call("browser.routes", thread_id=driver.thread_id))["target"]
    raw = await driver.control.call("test.content_call", tab_id=tab, tool="type", write=True,
                                    params={"ref": ref_of(page, 'textbox "Password"'), "text": "s3cret-value",
                                            "expect": {"role": "textbox", "name": "Password",
                                                       "leads": await form_leads(driver, "pw")}})
    assert raw["ok"], raw
    assert "s3cret-value" not in str(raw["value"]) and "12 characters (hidden)" in raw["value"]["resultText"]
    assert await driver.evaluate("form.html", "document.getElementById('pw').value") == "s3cret-value"


async def test_select_option_by_text_and_value(driver):
    page = await fresh(driver, "form.html")
    chosen = await driver.ok("select_option", element="Country", ref=ref_of(page, 'combobox "Country"'), values=["Germany"])
    assert 'Selected "Germany"' in chosen["text"] and chosen["details"]["evidence"]["effectState"] == "verified"
    assert await driver.evaluate("form.html", "document.getElementById('country').value") == "de"
    assert await driver.evaluate("form.html", "window.eventLog") == ["country:de"]
    page = (await driver.read())["text"]
    many = await driver.ok("select_option", element="Tags", ref=ref_of(page, 'listbox "Tags"'), values=["a", "Gamma"])
    assert many["ok"]
    assert await driver.evaluate("form.html", "[...document.getElementById('tags').selectedOptions].map(o => o.value)") == ["a", "c"]
    page = (await driver.read())["text"]
    missing = await driver.call("select_option", element="Country", ref=ref_of(page, 'combobox "Country"'), values=["Narnia"])
    assert not missing["ok"] and missing["error"]["code"] == "option_not_found"
    assert '"France"' in missing["error"]["message"] and missing["error"]["details"]["dispatched"] is True
    disabled = await driver.call("select_option", element="Country", ref=ref_of(page, 'combobox "Country"'), values=["jp"])
    assert not disabled["ok"] and disabled["error"]["code"] == "disabled"
    assert await driver.evaluate("form.html", "document.getElementById('country').value") == "de"


async def test_select_option_reports_what_the_page_holds_when_a_handler_reverts_it(driver):
    page = await fresh(driver, "form.html")
    country = ref_of(page, 'combobox "Country"')
    await driver.evaluate("form.html", "document.getElementById('country').addEventListener('change', (e) => "
                                       "{ e.target.value = 'fr'; }); document.getElementById('country').value = 'fr'; true")
    reverted = await driver.call("select_option", element="Country", ref=country, values=["Germany"])
    assert not reverted["ok"] and reverted["error"]["code"] == "l1_not_effective", reverted
    assert '"France" (value "fr")' in reverted["error"]["message"]
    assert reverted["error"]["details"]["holds"] == ["fr"] and reverted["error"]["details"]["requested"] == ["de"]
    assert await driver.evaluate("form.html", "document.getElementById('country').value") == "fr"
    # A select that truly held the value before is "already selected"; only then.
    page = (await driver.read())["text"]
    already = await driver.ok("select_option", element="Country", ref=ref_of(page, 'combobox "Country"'), values=["fr"])
    assert "(already selected)" in already["text"]


async def test_select_option_notices_a_revert_that_comes_after_the_change_event(driver):
    page = await fresh(driver, "form.html")
    # The page asks its server, then refuses the choice: the write waits for that request.
    await driver.evaluate("form.html", "document.getElementById('country').addEventListener('change', async (e) => "
                                       "{ await (await fetch('../l2/data.json?check=' + Date.now())).json(); "
                                       "e.target.value = ''; }); true")
    late = await driver.call("select_option", element="Country", ref=ref_of(page, 'combobox "Country"'), values=["de"])
    assert not late["ok"] and late["error"]["code"] == "l1_not_effective", late
    assert "once the page settled" in late["error"]["message"] and late["error"]["details"]["holds"] == [""]


async def test_a_change_that_comes_after_requests_the_click_started_is_in_its_diff(driver):
    page = await fresh(driver, "form.html")
    # Two requests in a row, then a short timer, then the page shows the answer: all caused by
    # the click, so its diff shows the answer and never "No structural change".
    await driver.evaluate("form.html", "document.getElementById('save').onclick = async () => { "
                                       "const a = await (await fetch('../l2/data.json?a=' + Date.now())).json(); "
                                       "const b = await (await fetch('../l2/data.json?b=' + Date.now())).json(); "
                                       "setTimeout(() => { document.getElementById('status').textContent = "
                                       "'Server said ' + a.value + b.value; }, 30); }; true")
    saved = await driver.ok("click", element="Save", ref=ref_of(page, 'button "Save"'))
    assert "Server said okok" in saved["text"].split("--- incremental snapshot ---")[1], saved["text"]
    assert "No structural change" not in saved["text"] and saved["details"]["changed"] is True
    # A click that sets nothing off changes nothing, and says so.
    page = (await driver.read())["text"]
    await driver.evaluate("form.html", "document.getElementById('save').onclick = null; true")
    quiet = await driver.ok("click", element="Save", ref=ref_of(page, 'button "Save"'))
    assert "No structural change detected." in quiet["text"] and quiet["details"]["changed"] is False


async def test_on_a_long_page_what_the_budgets_left_out_is_not_a_change(driver):
    # The read shows as much of the page as its budget holds; the write's smaller budget leaves
    # out more of it. A paragraph merely left out is not removed, nor one brought back added.
    page = await fresh(driver, "long.html")
    assert "[truncated:" in page
    await driver.evaluate("long.html", "document.querySelector('button').onclick = () => { "
                                       "document.querySelector('h1').textContent = 'Clicked once'; }; true")
    clicked = await driver.ok("click", element="Top button", ref=ref_of(page, 'button "Top button"'))
    changes = clicked["text"].split("--- incremental snapshot ---")[1]
    assert 'heading "Clicked once"' in changes.split("Added/changed:")[1], changes
    assert changes.split("Removed:\n")[1].split("\n\n")[0].split("\n") == ['- heading "Two hundred paragraphs" [level=1]'], changes
    assert "Paragraph" not in changes, changes


async def test_hover(driver):
    page = await fresh(driver, "states.html")
    hovered = await driver.ok("hover", element="menu", ref=ref_of(page, 'generic "Hover me"'))
    assert '- text: "hovered"' in hovered["text"]
    assert await driver.evaluate("states.html", "document.getElementById('hover-out').textContent") == "hovered"


async def test_press_key_is_trusted(driver):
    # press_key is an L2 tool: real key events through the debugger (synthetic only as a fallback).
    page = await fresh(driver, "states.html")
    field = ref_of(page, 'textbox "Key field"')
    pressed = await driver.ok("press_key", key="Control+a", ref=field)
    assert "trusted input" in pressed["text"]
    page = (await driver.read())["text"]
    await driver.ok("press_key", key="x", ref=ref_of(page, 'textbox "Key field"'))
    assert await driver.evaluate("states.html", "document.getElementById('keys-out').textContent") == "Control+ctrl a+ctrl x "
    assert await driver.evaluate("states.html", "document.getElementById('keys').value") == "x"
    bad = await driver.call("press_key", key="Hyper+q", ref=ref_of(page, 'textbox "Key field"'))
    assert not bad["ok"] and bad["error"]["code"] == "invalid_params"


async def test_submit_that_navigates_is_reported_with_the_new_page(driver):
    page = await fresh(driver, "search.html")
    result = await driver.ok("type", element="Query", ref=ref_of(page, 'textbox "Query"'), text="kittens", submit=True)
    assert "navigated to" in result["text"] and "result.html?q=kittens" in result["text"]
    assert "--- new page snapshot ---" in result["text"] and '- text: "You searched for: kittens"' in result["text"]
    assert result["details"]["evidence"]["observedEffects"] == ["url_changed"]
    assert await driver.evaluate("result.html?q=kittens", "document.getElementById('query').textContent") == "You searched for: kittens"


ARMED_HERE = """[document.readyState, !!(globalThis.__tabwardenWatch && globalThis.__tabwardenWatch.armed())]"""


async def test_the_page_a_click_loads_is_driven_while_it_is_still_loading(driver):
    # As the agent's own loads, the document a write's navigation commits is driven from its
    # commit: here its takeover watcher reports a person while the page still loads (a slow image
    # holds its load event), not only from the read after the load; and the click's answer
    # carries the page as loaded.
    page = await fresh(driver, "late-link.html")
    port = debugging_port(driver.site.run.profile)
    click = asyncio.ensure_future(driver.ok("click", element="Slow page", ref=ref_of(page, 'link "Slow page"')))
    seen = []
    while not click.done():
        if any("late-load.html" in t.get("url", "") for t in page_targets(port)):
            state = await evaluate_in_content_world(port, "late-load.html", ARMED_HERE, missing=None)
            if state is not None:
                seen.append(tuple(state))
        await asyncio.sleep(0.05)
    result = await click
    assert "navigated to" in result["text"] and 'button "Loaded at last"' in result["text"], result["text"]
    assert ("interactive", True) in seen or ("loading", True) in seen, seen


async def test_a_load_soon_after_a_write_gets_the_executor_once(driver):
    # The click's load, and the agent's own load right after it (while the click's watch on the
    # tab lasts), are each given the executor (or armed) once, though two watchers see the second
    # commit.
    page = await fresh(driver, "late-link.html")
    async with worker_injections(debugging_port(driver.site.run.profile)) as injections:
        clicked = await driver.ok("click", element="Slow page", ref=ref_of(page, 'link "Slow page"'))
        went = await driver.ok("navigate", url=driver.site.url("result.html", q="owls"))
        # What went into documents as they committed (the executor, or the arming of one the
        # browser puts in), by document.
        counts = Counter(doc for sent in await injections() if sent["immediately"] for doc in sent["documentIds"])
    assert "navigated to" in clicked["text"] and '- text: "You searched for: owls"' in went["text"], went["text"]
    assert sorted(counts.values()) == [1, 1], counts


@pytest.mark.parametrize("tool,name,extra,code,retryable", [
    ("click", 'button "Delete account"', {}, "disabled", False),
    ("type", 'button "Save"', {"text": "x"}, "not_editable", False),
    ("type", 'textbox "Invite code"', {"text": "x"}, "not_editable", False),
])
async def test_actionability_failures_on_the_form(driver, tool, name, extra, code, retryable):
    page = await fresh(driver, "form.html")
    result = await driver.call(tool, element=name, ref=ref_of(page, name), **extra)
    assert not result["ok"] and result["error"]["code"] == code
    assert result["error"]["phase"] == "precheck" and result["error"]["retryable"] is retryable
    assert result["error"]["details"]["dispatched"] is False
    assert await driver.evaluate("form.html", "document.getElementById('code').value") == "FIXED-1"
    assert await driver.evaluate("form.html", "window.eventLog") == []


async def test_an_occluded_button_is_not_clicked(driver):
    page = await fresh(driver, "states.html")
    result = await driver.call("click", element="veiled", ref=ref_of(page, "Under the veil"))
    assert not result["ok"] and result["error"]["code"] == "occluded" and result["error"]["retryable"]
    assert "div#cover" in result["error"]["message"]
    assert await driver.evaluate("states.html", "window.coveredClicks") is None


async def test_a_moving_button_is_not_stable(driver):
    tab = await driver.open("states.html")
    await driver.ok("tab_focus", tabId=tab)  # hidden tabs run no animations
    page = (await driver.read())["text"]
    result = await driver.call("click", element="mover", ref=ref_of(page, "Moving target"))
    assert not result["ok"] and result["error"]["code"] == "not_stable"
    assert await driver.evaluate("states.html", "window.moverClicks") is None


async def test_a_hidden_button_is_not_visible(driver):
    page = await fresh(driver, "states.html")
    # Its ref from the read before the click (the click's answer keeps it): a read after the
    # click could come after the page's timer on a busy machine, and find it hidden already.
    fading = ref_of(page, "Fading button")
    await driver.ok("click", element="Hide slowly", ref=ref_of(page, "Hide slowly"))
    session = await driver.page("states.html")
    try:
        for _ in range(200):  # the page hides it on its own timer, after the click's snapshot
            if await session.evaluate("getComputedStyle(document.getElementById('fading')).visibility") == "hidden":
                break
            await asyncio.sleep(0.05)
    finally:
        await session.close()
    result = await driver.call("click", element="fading", ref=fading)
    assert not result["ok"] and result["error"]["code"] == "not_visible" and result["error"]["retryable"]
    assert await driver.evaluate("states.html", "window.fadingClicks") is None


async def test_a_value_the_page_refuses_is_not_effective(driver):
    tab = await driver.open("states.html")
    # In front: the page reverts with a 50 ms timer, which Chromium delays to the next whole
    # second in a hidden tab, after the executor's check.
    await driver.ok("tab_focus", tabId=tab)
    page = (await driver.read())["text"]
    refused = await driver.call("type", element="stubborn", ref=ref_of(page, "Stubborn field"), text="hello")
    assert not refused["ok"] and refused["error"]["code"] == "l1_not_effective"
    assert refused["error"]["phase"] == "verify" and refused["error"]["details"]["escalationTool"] == "type_trusted"
    assert refused["error"]["details"]["effectMayHaveOccurred"] is True
    page = (await driver.read())["text"]
    reverted = await driver.call("type", element="reverting", ref=ref_of(page, "Reverting field"), text="kept?")
    assert not reverted["ok"] and reverted["error"]["code"] == "l1_not_effective"
    assert "not kept" in reverted["error"]["message"]
    assert await driver.evaluate("states.html", "document.getElementById('sticky').value") == ""


async def test_a_stale_ref_is_recovered_once_to_a_unique_identical_target(driver):
    first = await fresh(driver, "spa.html")
    message = ref_of(first, 'textbox "Message"')
    rerendered = await driver.ok("click", element="Re-render", ref=ref_of(first, "Re-render"))
    assert await driver.evaluate("spa.html", "window.renders") == 2
    assert 'heading "Render again"' in rerendered["text"]
    typed = await driver.ok("type", element="Message", ref=message, text="hi there")
    assert f"target recovered from {message} to " in typed["text"]
    assert await driver.evaluate("spa.html", "document.querySelector('input').value") == "hi there"


async def test_recovery_with_two_candidates_is_ambiguous(driver):
    first = await fresh(driver, "spa.html")
    like = ref_of(first, 'button "Like"')
    await driver.ok("click", element="Duplicate likes", ref=ref_of(first, "Duplicate likes"))
    result = await driver.call("click", element="Like", ref=like)
    assert not result["ok"] and result["error"]["code"] == "ambiguous_target"
    assert result["error"]["phase"] == "recover" and "2 candidates" in result["error"]["message"]
    assert await driver.evaluate("spa.html", "window.clicks.like") is None


async def test_hover_never_recovers_a_stale_ref(driver):
    first = await fresh(driver, "spa.html")
    await driver.ok("click", element="Re-render", ref=ref_of(first, "Re-render"))
    result = await driver.call("hover", element="Like", ref=ref_of(first, 'button "Like"'))
    assert not result["ok"] and result["error"]["code"] == "stale_ref" and result["error"]["retryable"]


@pytest.mark.parametrize("ref", ["s1_1", "e12", "ref-7"])
async def test_a_ref_of_another_shape_is_stale_with_the_advice_to_read_again(driver, ref):
    # An older ref format, or one the model made up: stale (read the page again), not a malformed call.
    await fresh(driver, "form.html")
    for tool, params in (("click", {"element": "Save"}), ("extract", {})):
        key = "scope" if tool == "extract" else "ref"
        result = await driver.call(tool, **params, **{key: ref})
        assert not result["ok"] and result["error"]["code"] == "stale_ref", (tool, result)
        assert result["error"]["retryable"] and "call read_page again" in result["error"]["message"]
    tab = await driver.open("form.html")
    # The page executor's own check says the same when such a ref reaches it.
    raw = await driver.control.call("test.content_call", tab_id=tab, tool="click", write=True,
                                    params={"ref": ref, "expect": {"role": "button", "name": "Save"}})
    assert raw["ok"] is False and raw["error"]["code"] == "stale_ref", raw
    assert "call read_page again" in raw["error"]["message"]
    assert await driver.evaluate("form.html", "document.getElementById('status').textContent") == ""


async def test_batch_actions_run_in_order(driver):
    page = await fresh(driver, "form.html")
    result = await driver.ok("batch_actions", actions=[
        {"action": "type", "element": "name", "ref": ref_of(page, 'textbox "Full name"'), "text": "Ada"},
        {"action": "select_option", "element": "country", "ref": ref_of(page, 'combobox "Country"'), "values": ["fr"]},
        {"action": "click", "element": "save", "ref": ref_of(page, 'button "Save"')},
    ])
    assert [s["action"] for s in result["details"]["steps"]] == ["type", "select_option", "click"]
    assert "1. Typed" in result["text"] and "3. Clicked" in result["text"]
    assert await driver.evaluate("form.html", "document.getElementById('status').textContent") == "Saved Ada"
    assert await driver.evaluate("form.html", "document.getElementById('country').value") == "fr"


async def test_batch_stops_when_the_page_changes_a_lot(driver):
    page = await fresh(driver, "spa.html")
    result = await driver.ok("batch_actions", actions=[
        {"action": "click", "element": "Load more", "ref": ref_of(page, "Load more")},
        {"action": "click", "element": "Like", "ref": ref_of(page, 'button "Like"')},
    ])
    assert "Stopped after action 1: the page changed a lot" in result["text"]
    assert len(result["details"]["steps"]) == 1
    assert await driver.evaluate("spa.html", "window.clicks.like") is None
    assert await driver.evaluate("spa.html", "document.querySelectorAll('button').length") == 14


async def test_batch_stops_after_an_action_that_loads_a_page(driver):
    page = await fresh(driver, "search.html")
    result = await driver.ok("batch_actions", actions=[
        {"action": "type", "element": "Query", "ref": ref_of(page, 'textbox "Query"'), "text": "owls"},
        {"action": "click", "element": "results link", "ref": ref_of(page, "Go to results")},
        {"action": "type", "element": "Query", "ref": ref_of(page, 'textbox "Query"'), "text": "never typed"},
    ])
    assert "navigated to" in result["text"] and "result.html?from=link" in result["text"]
    assert await driver.evaluate("result.html?from=link", "location.search") == "?from=link"


async def test_a_failing_batch_step_reports_what_ran(driver):
    page = await fresh(driver, "form.html")
    result = await driver.call("batch_actions", actions=[
        {"action": "type", "element": "name", "ref": ref_of(page, 'textbox "Full name"'), "text": "Bo"},
        {"action": "click", "element": "disabled", "ref": ref_of(page, 'button "Delete account"')},
        {"action": "click", "element": "save", "ref": ref_of(page, 'button "Save"')},
    ])
    assert not result["ok"] and result["error"]["code"] == "disabled"
    details = result["error"]["details"]
    assert details["failedIndex"] == 1 and details["notRun"] == 1 and len(details["completed"]) == 1
    assert details["effectMayHaveOccurred"] is True
    assert await driver.evaluate("form.html", "document.getElementById('name').value") == "Bo"
    assert await driver.evaluate("form.html", "document.getElementById('status').textContent") == ""


async def test_the_overlay_is_drawn_isolated_and_left_out_of_snapshots(driver):
    page = await fresh(driver, "states.html")
    clicked = await driver.ok("click", element="Hide the other", ref=ref_of(page, "Hide the other"))
    added = await driver.evaluate("states.html", "window.added")
    assert "div" in added and not [name for name in added if "tabwarden" in name]  # drawn, by no name of ours
    assert "overlay" not in clicked["text"]
    # Closed shadow root: the page cannot look inside.
    assert await driver.evaluate("states.html", "[...document.documentElement.children].filter(e => e.localName === 'div')"
                                 ".every(e => e.shadowRoot === null)")


async def test_a_change_made_in_the_next_animation_frame_is_in_the_answer(driver):
    tab = await driver.open("raf.html")
    await driver.ok("tab_focus", tabId=tab)  # a shown page renders frames
    page = (await driver.read())["text"]
    later = await driver.ok("click", element="Paint later", ref=ref_of(page, 'button "Paint later"'))
    assert 'text: "Painted in a frame"' in later["text"], later["text"]
    page = (await driver.read())["text"]
    now = await driver.ok("click", element="Change now", ref=ref_of(page, 'button "Change now"'))
    assert 'text: "Changed at once"' in now["text"], now["text"]
    # Typing waits for a frame only when the page asks for one; this one does.
    typed = await driver.ok("type", element="Name", ref=ref_of(page, 'textbox "Name"'), text="Ada")
    assert 'text: "Hello Ada"' in typed["text"], typed["text"]


async def test_a_covered_input_is_clicked_through_its_own_label_and_otherwise_refused_saying_what_to_do(driver):
    page = await fresh(driver, "covered.html")
    # The first star's radio lies under the third star's label; its own label is clear.
    chose = await driver.ok("click", element="One star", ref=ref_of(page, 'radio "One star"'))
    assert 'Clicked radio "One star"' in chose["text"] and 'through its label "One star" (another element covers it)' in chose["text"], chose["text"]
    assert 'radio "One star" [checked]' in chose["text"], chose["text"]
    assert await driver.evaluate("covered.html", "[...document.querySelectorAll('input[name=stars]')].map((r) => r.checked)") == \
        [True, False, False]
    # A batch click goes the same way.
    both = await driver.ok("batch_actions", actions=[{"action": "click", "ref": ref_of(page, 'radio "Two stars"'),
                                                      "element": "Two stars"}])
    assert await driver.evaluate("covered.html", "document.getElementById('s2').checked") is True, both["text"]
    # A double click is aimed at the place: it is not sent through the label.
    twice = await driver.call("click", element="One star", ref=ref_of(page, 'radio "One star"'), doubleClick=True)
    assert not twice["ok"] and twice["error"]["code"] == "occluded", twice
    # With no label of its own, the refusal says what to do instead; nothing was clicked.
    lone = await driver.call("click", element="Keep me posted", ref=ref_of(page, 'checkbox "Keep me posted"'))
    assert not lone["ok"] and lone["error"]["code"] == "occluded", lone
    assert "no label of its own" in lone["error"]["message"] and "click_xy" in lone["error"]["message"], lone
    assert await driver.evaluate("covered.html", "document.getElementById('lone').checked") is False
