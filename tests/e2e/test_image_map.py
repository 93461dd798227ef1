"""Image maps in a real browser: each `<area href>` of a map a shown `<img usemap>` uses is a
link under its image in `read_page`, named by its alt (or aria-label), with a ref and its
destination; an area without href is nothing. A click on its ref lands inside its shape (rect,
circle, a concave polygon, an image shown at twice its file's size, an area whose middle an
earlier area of the map covers), synthetic and trusted alike: the page records where each
click's point is. A click on an area leading to another site is judged as a link to the same
URL is (scope lock, blocked list, the default policy, an account number carried in the URL), and
nothing reaches that site unless the thread may go there. The two sites are reached by their
own names (`shop.test`, `partner.test`), mapped to this machine by --host-resolver-rules."""

from __future__ import annotations

import json
import re
from types import SimpleNamespace
from urllib.parse import quote

import pytest

from tests.support.browser_tools import Driver, hooks_enabled, named_driver, ref_of, running_browser
from tests.support.browser_tools_l2 import deep_ref
from tests.support.scripted_site import Site, html

pytestmark = pytest.mark.browser

SHOP, PARTNER = "shop.test", "partner.test"
RESOLVER = f"--host-resolver-rules=MAP {SHOP} 127.0.0.1, MAP {PARTNER} 127.0.0.1"
PAGE_IBAN = "GB33BUKB20201555555555"  # an account the shop's page shows
# A plain picture, 200 x 100 in its own file: its size decides how an area's coords are read.
PICTURE = ("data:image/svg+xml," + quote("<svg xmlns='http://www.w3.org/2000/svg' width='200' height='100'>"
                                         "<rect width='200' height='100' fill='#dde'/></svg>"))

# Every click on an area is recorded with whether its point lies inside that area (what the
# browser's own hit test finds there) and whether it was trusted; the links go nowhere.
PLAN = f"""<!doctype html><title>Floor plan</title>
<style>body {{ margin: 0; font: 14px sans-serif }} img {{ display: block; margin: 12px }}</style>
<h1>Floor plan</h1>
<img src="{PICTURE}" width="200" height="100" usemap="#plan" alt="Floor plan">
<map name="plan">
  <area shape="rect" coords="0,0,60,50" href="#kitchen" alt="Kitchen">
  <area shape="circle" coords="100,50,25" href="#hall" aria-label="Hall">
  <!-- An L: the middle of its bounds (170, 50) lies outside it. -->
  <area shape="poly" coords="140,0 200,0 200,100 180,100 180,20 140,20" href="#garden" alt="Garden">
  <area shape="rect" coords="0,60,60,100" alt="Cellar">
  <area shape="rect" coords="60,80,120,100" nohref alt="Attic">
</map>
<!-- Shown at twice its file's size: coords stay CSS pixels from its corner, unscaled. -->
<img src="{PICTURE}" width="400" height="200" usemap="#wings" alt="Wings">
<map name="wings">
  <area shape="rect" coords="0,0,100,50" href="#north" alt="North wing">
  <area shape="rect" coords="100,50,200,100" href="#south" alt="South wing">
</map>
<!-- No name of its own: its links are listed all the same. The rug, listed first, covers the
     middle of the sofa, so a click there is the rug's. -->
<img src="{PICTURE}" width="200" height="100" usemap="#lounge" alt="">
<map name="lounge">
  <area shape="rect" coords="100,0,140,100" href="#rug" alt="Rug">
  <area shape="rect" coords="80,20,180,80" href="#sofa" alt="Sofa">
</map>
<img hidden src="{PICTURE}" width="200" height="100" usemap="#loft" alt="Loft">
<map name="loft"><area shape="default" href="#loft" alt="Loft door"></map>
<script>
  window.hits = [];
  document.addEventListener("click", (event) => {{
    const area = event.target.closest && event.target.closest("area");
    if (!area) return;
    event.preventDefault();
    const at = document.elementFromPoint(event.clientX, event.clientY);
    window.hits.push({{ name: area.alt || area.getAttribute("aria-label"), inside: at === area, trusted: event.isTrusted }});
  }});
</script>"""


def partner_page(partner: str) -> str:
    """The shop's way out: an area and a link to the same partner URLs, one plain and one
    carrying the account the page shows."""
    plain = f"{partner}/pay?from=shop"
    carrying = f"{partner}/pay?iban={PAGE_IBAN}"
    return f"""<!doctype html><title>Pay</title><h1>Pay</h1><p>Our account: {PAGE_IBAN}</p>
<img src="{PICTURE}" width="200" height="100" usemap="#pay" alt="Ways to pay">
<map name="pay">
  <area shape="rect" coords="0,0,100,100" href="{plain}" alt="Pay at partner">
  <area shape="rect" coords="100,0,200,100" href="{carrying}" alt="Pay our account">
</map>
<p><a href="{plain}">Pay at partner by link</a> <a href="{carrying}">Pay our account by link</a></p>"""


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    partner = Site("127.0.0.1", {"/pay": html("<title>Partner</title><h1>Paid</h1>")})
    shop = Site("127.0.0.1", {"/plan.html": html(PLAN)})
    with shop, partner, hooks_enabled():
        shop_origin, partner_origin = f"http://{SHOP}:{shop.port}", f"http://{PARTNER}:{partner.port}"
        shop.routes["/pay.html"] = html(partner_page(partner_origin))
        with running_browser(tmp_path_factory.mktemp("image-map"), [f"http://{SHOP}/*"], browser_args=[RESOLVER]) as run:
            yield SimpleNamespace(run=run, shop=shop, partner=partner, shop_origin=shop_origin,
                                  partner_origin=partner_origin)


driver = pytest.fixture(named_driver)


_visits = iter(range(1, 10_000))


async def open_page(driver: Driver, env, path: str) -> str:
    """Open a fresh copy of a shop page as the thread's tab (`driver.tab`, its URL unique by
    `driver.visit`) and read it."""
    driver.visit = f"{path}?visit={next(_visits)}"  # type: ignore[attr-defined]
    driver.tab = (await driver.ok("tab_open", url=env.shop.url(SHOP, driver.visit)))["tabId"]  # type: ignore[attr-defined]
    await driver.control.call("browser.bind_target", thread_id=driver.thread_id, tab_id=driver.tab)  # type: ignore[attr-defined]
    return (await driver.read())["text"]


async def on_page(driver: Driver, expression: str):
    return await driver.evaluate(driver.visit, expression)  # type: ignore[attr-defined]


async def hits(driver: Driver) -> list[dict]:
    return await on_page(driver, "window.hits")


def lines_of(page: str) -> list[str]:
    return [line.split("] ", 1)[1] if line.startswith("[tabId=") else line for line in page.split("\n")]


LINK = re.compile(r'^(?P<indent> *)- link "(?P<name>[^"]+)" .*\[ref=s[0-9a-z]+_\d+_\d+\]')


def links(page: str) -> dict[str, int]:
    """Each link's name and depth (its indent)."""
    found = {}
    for line in lines_of(page):
        match = LINK.match(line)
        if match:
            found[match["name"]] = len(match["indent"]) // 2
    return found


async def test_each_linked_area_is_a_link_under_its_image(driver, env):
    page = await open_page(driver, env, "/plan.html")
    body = lines_of(page)
    plan = body.index('- img "Floor plan"')
    assert [line.split(" [ref=")[0] for line in body[plan + 1:plan + 4]] == [
        '  - link "Kitchen"', '  - link "Hall"', '  - link "Garden"']
    wings = body.index('- img "Wings"')
    assert body[wings + 1].startswith('  - link "North wing" [ref=') and body[wings + 2].startswith('  - link "South wing" [ref=')
    # The unnamed image has no line of its own; its links are where it stands.
    assert links(page) == {"Kitchen": 1, "Hall": 1, "Garden": 1, "North wing": 1, "South wing": 1, "Rug": 0, "Sofa": 0}
    refs = {hint["name"]: hint for hint in (await driver.control.call("browser.refs", tab_id=driver.tab))["refs"]}
    kitchen = refs["Kitchen"]
    assert (kitchen["role"], kitchen["tag"]) == ("link", "area")
    assert kitchen["destination"]["url"].startswith(f"{env.shop_origin}/plan.html?visit=")
    assert kitchen["destination"]["url"].endswith("#kitchen") and kitchen["destination"]["method"] == "GET"


async def test_an_area_without_href_or_under_a_hidden_image_is_no_link(driver, env):
    page = await open_page(driver, env, "/plan.html")
    for name in ("Cellar", "Attic", "Loft door", "Loft"):
        assert name not in page, page


SHAPES = ("Kitchen", "Hall", "Garden", "North wing", "South wing", "Sofa")


@pytest.mark.parametrize("tool", ["click", "click_trusted"])
async def test_a_click_lands_inside_the_areas_shape(driver, env, tool):
    page = await open_page(driver, env, "/plan.html")
    for name in SHAPES:
        clicked = await driver.call(tool, element=name, ref=ref_of(page, f'link "{name}"'))
        assert clicked["ok"], clicked
        assert (await hits(driver))[-1] == {"name": name, "inside": True, "trusted": tool == "click_trusted"}, name
        page = (await driver.read())["text"]
    assert [hit["name"] for hit in await hits(driver)] == list(SHAPES)


async def test_a_trusted_click_reaches_an_area_by_its_deep_ref(driver, env):
    await open_page(driver, env, "/plan.html")
    deep = (await driver.ok("read_page_deep"))["text"]
    clicked = await driver.call("click_trusted", element="Garden", ref=deep_ref(deep, 'link "Garden"'))
    assert clicked["ok"], clicked
    assert (await hits(driver))[-1] == {"name": "Garden", "inside": True, "trusted": True}


async def test_an_area_covered_all_over_is_not_clicked(driver, env):
    page = await open_page(driver, env, "/plan.html")
    await on_page(driver, "document.querySelector('area[alt=Rug]').coords = '0,0,200,100', 1")
    for tool in ("click", "click_trusted"):
        result = await driver.call(tool, element="Sofa", ref=ref_of(page, 'link "Sofa"'))
        assert not result["ok"] and result["error"]["code"] == "occluded", result
        assert result["error"]["details"]["dispatched"] is False
    assert await hits(driver) == []


# ---------------------------------------------------------------- judged as a link


def judged(result: dict) -> tuple:
    """What the gatekeeper made of a call: allowed, or its refusal's code, reason, origin and flags."""
    if result["ok"]:
        return ("ok",)
    details = result["error"]["details"]
    return (result["error"]["code"], details.get("reasonCode"), details.get("targetOrigin"),
            tuple(sorted(details.get("flags") or ())))


async def area_and_link(driver: Driver, env, area: str, link: str, **extra) -> tuple[tuple, tuple]:
    """The same call on the area and on the link to the same URL; nothing may reach the partner."""
    page = await open_page(driver, env, "/pay.html")
    before = list(env.partner.hits)
    on_area = await driver.call("click", element=area, ref=ref_of(page, f'link "{area}"'), **extra)
    on_link = await driver.call("click", element=link, ref=ref_of(page, f'link "{link}"'), **extra)
    assert env.partner.hits == before, env.partner.hits
    return judged(on_area), judged(on_link)


async def test_the_snapshot_says_where_an_area_leads(driver, env):
    page = await open_page(driver, env, "/pay.html")
    line = next(line for line in lines_of(page) if 'link "Pay at partner"' in line)
    assert f"[to {env.partner_origin}/pay?from=shop]" in line


@pytest.mark.parametrize("fence", ["scope_lock", "blocked"])
async def test_an_area_to_another_site_is_refused_as_a_link_is(driver, env, fence):
    if fence == "scope_lock":
        await driver.control.call("gatekeeper.set_scope_lock", thread_id=driver.thread_id, patterns=[env.shop_origin])
    else:
        await driver.control.call("gatekeeper.add_origin", pattern=env.partner_origin, list="blocked")
    try:
        area, link = await area_and_link(driver, env, "Pay at partner", "Pay at partner by link")
    finally:
        if fence == "scope_lock":
            await driver.control.call("gatekeeper.set_scope_lock", thread_id=driver.thread_id, patterns=None)
        else:
            await driver.control.call("gatekeeper.remove_origin", pattern=env.partner_origin, list="blocked")
    code = "scope_lock" if fence == "scope_lock" else "sensitive_origin"
    assert area == link and area[:3] == ("denied", code, env.partner_origin), (area, link)
    rows = await driver.control.call("gatekeeper.audit", thread_id=driver.thread_id, last=5)
    assert [row["target_origin"] for row in rows if row["kind"] == "decision"][-2:] == [env.partner_origin] * 2, rows


async def test_an_area_to_another_site_asks_as_a_link_does(driver, env):
    area, link = await area_and_link(driver, env, "Pay at partner", "Pay at partner by link", policy=None)
    assert area == link and area[:3] == ("approval_required", "policy_default", env.partner_origin), (area, link)


async def test_an_area_carrying_an_account_in_its_url_asks_as_the_link_does(driver, env):
    area, link = await area_and_link(driver, env, "Pay our account", "Pay our account by link")
    assert area == link and area[0] == "approval_required" and area[2] == env.partner_origin, (area, link)


async def test_allowed_the_area_takes_the_page_there(driver, env):
    page = await open_page(driver, env, "/pay.html")
    clicked = await driver.call("click", element="Pay at partner", ref=ref_of(page, 'link "Pay at partner"'))
    assert clicked["ok"], clicked
    assert any(hit.startswith("/pay?from=shop") for hit in env.partner.hits), env.partner.hits
    urls = [tab["url"] for tab in await driver.control.call("browser.tabs")]
    assert f"{env.partner_origin}/pay?from=shop" in urls, json.dumps(urls)
