"""Fields judged on facts in a real browser: a text field the page labels "Account password" is a
credential target whose value no snapshot shows, and text typed into a field in pieces is judged
on what the field then holds."""

from __future__ import annotations

import pytest

from tests.support.browser_tools import l1_site, module_fixtures, new_driver, ref_of

pytestmark = pytest.mark.browser

site, driver = module_fixtures(l1_site, new_driver, "l1-credentials")


async def test_a_text_field_labelled_account_password_is_a_credential_target(driver):
    tab = await driver.open("credentials.html")
    page = (await driver.read())["text"]
    account = ref_of(page, 'textbox "Account password"')
    refs = await driver.control.call("browser.refs", tab_id=tab)
    hint = next(h for h in refs["refs"] if h["ref"] == account)
    assert hint["credential"] is True and hint["inputType"] == "text"
    result = await driver.call("type", element="the comment box", ref=account, text="hunter2-typed")
    assert not result["ok"] and result["error"]["code"] == "approval_required"
    assert result["error"]["details"]["reasonCode"] == "sensitive_payload"
    assert await driver.evaluate("credentials.html", "document.getElementById('acct').value") == ""
    # Whatever put a value there (the user, an approved call), the next read does not show it.
    await driver.evaluate("credentials.html", "document.getElementById('acct').value = 'hunter2-typed'")
    await driver.evaluate("credentials.html", "document.getElementById('csc').value = '737'")
    page = (await driver.read())["text"]
    assert "hunter2-typed" not in page and "737" not in page
    assert '- textbox "Account password" [value hidden] [ref=' in page
    assert '- textbox "Card security" [value hidden] [ref=' in page
    refs = await driver.control.call("browser.refs", tab_id=tab)
    assert "hunter2-typed" not in str(refs)


async def test_a_field_named_in_full_width_letters_is_a_credential_target_too(driver):
    # Its label folds (NFKC) to "Passcode": names that are not plain ASCII are folded before the
    # word lists are matched.
    tab = await driver.open("credentials.html")
    await driver.evaluate("credentials.html", "document.getElementById('wide').value = '4242'")
    page = (await driver.read())["text"]
    assert "4242" not in page
    wide = ref_of(page, 'textbox "\uff30\uff41\uff53\uff53\uff43\uff4f\uff44\uff45" [value hidden]')
    refs = await driver.control.call("browser.refs", tab_id=tab)
    assert next(h for h in refs["refs"] if h["ref"] == wide)["credential"] is True


async def test_a_card_number_typed_in_two_appends_is_caught(driver):
    await driver.open("credentials.html")
    page = (await driver.read())["text"]
    notes = ref_of(page, 'textbox "Order notes"')
    await driver.ok("type", element="Order notes", ref=notes, text="4111 1111 ", mode="append")
    assert await driver.evaluate("credentials.html", "document.getElementById('notes').value") == "4111 1111 "
    # The older ref names the same field: the host knows what it holds now.
    result = await driver.call("type", element="Order notes", ref=notes, text="1111 1111", mode="append")
    assert not result["ok"] and result["error"]["code"] == "approval_required", result
    assert result["error"]["details"]["reasonCode"] == "sensitive_payload"
    assert await driver.evaluate("credentials.html", "document.getElementById('notes').value") == "4111 1111 "
    # Ordinary text appended to it is fine.
    page = (await driver.read())["text"]
    await driver.ok("type", element="Order notes", ref=ref_of(page, 'textbox "Order notes"'), text=" thanks",
                    mode="append")


async def test_a_number_typed_box_by_box_is_caught_on_the_last_box(driver):
    await driver.open("credentials.html")
    for box, group in ((1, "4111"), (2, "1111"), (3, "1111")):
        page = (await driver.read())["text"]
        await driver.ok("type", element=f"box {box}", ref=ref_of(page, f'textbox "Group {box}"'), text=group)
    page = (await driver.read())["text"]
    result = await driver.call("type", element="box 4", ref=ref_of(page, 'textbox "Group 4"'), text="1111")
    assert not result["ok"] and result["error"]["code"] == "approval_required", result
    assert result["error"]["details"]["reasonCode"] == "sensitive_payload"
    assert await driver.evaluate("credentials.html", "document.getElementById('g4').value") == ""


async def test_a_field_relabelled_between_reads_is_judged_on_its_label_of_each_read(driver):
    # What one read works out about a field (its name, whether it is a credential) is not kept
    # for the next: the page may have changed in between.
    await driver.open("credentials.html")
    await driver.evaluate("credentials.html", "document.getElementById('notes').value = 'gift wrap'")
    page = (await driver.read())["text"]
    assert '- textbox "Order notes" [value="gift wrap"] [ref=' in page
    await driver.evaluate("credentials.html", "document.querySelector('label[for=notes]').textContent = 'Your PIN'")
    page = (await driver.read())["text"]
    assert '- textbox "Your PIN" [value hidden] [ref=' in page and "gift wrap" not in page
    await driver.evaluate("credentials.html", "document.querySelector('label[for=notes]').textContent = 'Order notes'")
    page = (await driver.read())["text"]
    assert '- textbox "Order notes" [value="gift wrap"] [ref=' in page
