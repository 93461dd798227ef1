"""The executor the browser puts into pages while the agent works, in a real browser: only into
the pages of the sites the agent works on, dormant there (a page a person opens is not driven by
it), the read after the agent's own load served by it without an injection, and nothing once the
work has ended or the host has gone. Two sites by their own names (`shop.test`, `news.test`), both granted, mapped to
this machine by --host-resolver-rules."""

from __future__ import annotations

import os
import signal
from types import SimpleNamespace

import pytest

from tests.support.browser_tools import (EXECUTOR_AND_WATCH, Driver, a_person_opens, hooks_enabled, named_driver, ref_of,
                                         running_browser, worker_injections)
from tests.support.cdp import debugging_port, evaluate_in_content_world, evaluate_in_worker
from tests.support.hosts import attach
from tests.support.scripted_site import Site, html
from tests.support.waiting import until

pytestmark = pytest.mark.browser

SHOP, NEWS = "shop.test", "news.test"
RESOLVER = f"--host-resolver-rules=MAP {SHOP} 127.0.0.1, MAP {NEWS} 127.0.0.1"
PAGE = html("<title>A page</title><h1>A page</h1><p><a href='/page?next=1'>Next page</a></p>")

@pytest.fixture(scope="module")
def env(tmp_path_factory):
    permissions = [f"http://{SHOP}/*", f"http://{NEWS}/*"]
    with Site("127.0.0.1", {"/page": PAGE}) as pages, hooks_enabled(), \
            running_browser(tmp_path_factory.mktemp("executor-at-work"), permissions, browser_args=[RESOLVER]) as run:
        yield SimpleNamespace(run=run, pages=pages)


driver = pytest.fixture(named_driver)


async def sites_in_force(port: int, *sites: str) -> None:
    """Wait until the browser has the executor registered for exactly `sites`."""
    want = sorted(f"http://{site}/*" for site in sites)

    async def settled() -> bool:
        return sorted(await evaluate_in_worker(port, "tabwarden.executorAtWork.state().inForce")) == want

    await until(settled, 5, f"the executor registered for {want}", interval=0.05)


async def test_only_the_pages_of_the_sites_the_agent_works_on_carry_the_executor(driver, env):
    port = debugging_port(env.run.profile)
    url = env.pages.url(SHOP, "/page?agent=1")
    tab = (await driver.ok("tab_open", url=url))["tabId"]
    await driver.ok("read_page", tabId=tab)
    assert await evaluate_in_content_world(port, "agent=1", EXECUTOR_AND_WATCH) == [True, True]
    await sites_in_force(port, SHOP)
    # The person's own pages: on the agent's site it rides along, dormant; elsewhere it is not.
    assert await a_person_opens(driver, "person=1", env.pages.url(SHOP, "/page?person=1")) == [True, False]
    assert await a_person_opens(driver, "person=2", env.pages.url(NEWS, "/page?person=2")) == [False, False]
    # The agent goes to the other site: from then on its pages there carry it too.
    await driver.ok("navigate", tabId=tab, url=env.pages.url(NEWS, "/page?agent=2"))
    await sites_in_force(port, SHOP, NEWS)
    assert await a_person_opens(driver, "person=3", env.pages.url(NEWS, "/page?person=3")) == [True, False]
    # The work over, no page gets it.
    await evaluate_in_worker(port, "tabwarden.executorAtWork.end()")
    await sites_in_force(port)
    assert await a_person_opens(driver, "person=4", env.pages.url(SHOP, "/page?person=4")) == [False, False]


async def test_the_agents_load_is_read_without_injecting_the_executor(driver, env):
    # With the registration in force for the site, the page has the executor when the read after
    # its load comes: the worker injects nothing, into the agent's load or a click's.
    port = debugging_port(env.run.profile)
    tab = (await driver.ok("tab_open", url=env.pages.url(SHOP, "/page?first=1")))["tabId"]
    await driver.ok("read_page", tabId=tab)
    await sites_in_force(port, SHOP)
    async with worker_injections(port) as sent:
        went = await driver.ok("navigate", tabId=tab, url=env.pages.url(SHOP, "/page?second=1"))
        clicked = await driver.ok("click", tabId=tab, ref=ref_of(went["text"], 'link "Next page"'), element="Next page")
        injections = sum("content/executor.js" in one["files"] for one in await sent())
    assert 'heading "A page"' in went["text"] and "navigated to" in clicked["text"], clicked["text"]
    assert injections == 0
    assert await evaluate_in_content_world(port, "next=1", EXECUTOR_AND_WATCH) == [True, True]


async def test_the_registration_goes_with_the_host(driver, env):
    # The host gone (killed here), no agent works: the browser stops putting the executor into
    # pages. The worker then starts a new host; the next page call registers it again.
    port = debugging_port(env.run.profile)
    tab = (await driver.ok("tab_open", url=env.pages.url(SHOP, "/page?before=1")))["tabId"]
    await driver.ok("read_page", tabId=tab)
    await sites_in_force(port, SHOP)
    old = env.run.host_pids()
    assert len(old) == 1
    os.kill(old[0], signal.SIGKILL)
    await sites_in_force(port)
    registered = await evaluate_in_worker(port, "chrome.scripting.getRegisteredContentScripts().then((s) => s.map((x) => x.id))")
    assert "executor-at-work" not in registered, registered
    await until(lambda: [p for p in env.run.host_pids() if p not in old], 60, "a new host", interval=0.2)
    control = await attach(timeout=30)
    try:
        again = Driver(env, control, "after-restart")  # type: ignore[arg-type]  # only its run is used
        tab = (await again.ok("tab_open", url=env.pages.url(SHOP, "/page?after=1")))["tabId"]
        await again.ok("read_page", tabId=tab)
        await sites_in_force(port, SHOP)
    finally:
        await control.close()
