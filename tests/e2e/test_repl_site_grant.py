"""Site access granted and taken back from a running REPL, in a real headless browser where no
side panel can be opened: `tw.grant_site` has the host add the site to the manifest of the run's
extension copy, the extension reloads to take it, and the REPL attaches to the host the reload
started; page tools then run on that site. `tw.revoke_site` takes it back the same way."""

from __future__ import annotations

import pytest

from host.repl.style import Style
from host.repl.tw import Tabwarden
from tests.support.browser_tools import l1_site, module_fixtures, new_driver
from tests.support.pages import PageServer

pytestmark = pytest.mark.browser

site, driver = module_fixtures(l1_site, new_driver, "repl-site-grant")


@pytest.fixture(scope="module")
def elsewhere():
    with PageServer(host="127.0.0.2") as server:  # a site this browser was not granted at launch
        yield server


async def test_a_site_granted_from_the_repl_takes_page_tools_there_and_can_be_taken_back(driver, elsewhere):
    tw = Tabwarden(driver.control, Style(False), thread=driver.thread_id)
    tw.policy = "auto"
    other = f"http://127.0.0.2:{elsewhere.port}"
    page = elsewhere.url("l1/form.html")
    opened = await tw.run("tab_open", url=page)
    tab = opened.data["tabId"]
    refused = await tw.snapshot(tab)
    assert refused.data["error"]["code"] == "approval_required", refused.data  # no site access yet

    first_pid = tw.client.pid
    granted = repr(await tw.grant_site(page))
    assert granted.startswith(f"Granted Tabwarden access to {other} ({other}/*): page tools can run there.")
    assert tw.client.pid != first_pid and f"now attached to host pid {tw.client.pid}" in granted
    assert f"{other}/*" in repr(await tw.site_access())
    assert "http://127.0.0.1/*" in repr(await tw.site_access()), "the sites granted before stay"
    snapshot = await tw.snapshot(tab)
    assert snapshot.data["ok"] is True, snapshot.data
    assert repr(await tw.grant_site(other)) == f"Tabwarden already has access to {other}: page tools can run there."

    revoked = repr(await tw.revoke_site(other))
    assert revoked.startswith(f"Took back Tabwarden's access to {other} ({other}/*).")
    assert f"{other}/*" not in repr(await tw.site_access())
    again = await tw.snapshot(tab)
    assert again.data["error"]["code"] == "approval_required", again.data
    await tw.client.close()
