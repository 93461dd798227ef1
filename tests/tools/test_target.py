"""When a resolved target is still the place that was judged: the same tab at the same origin whose
elements lead to the same places; an empty or new-tab page is one place whatever the browser
calls it while its new-tab page loads."""

from host.tools.call import Target


def test_the_same_tab_at_another_origin_is_another_place():
    before = Target(origin="https://shop.example", url="https://shop.example/a", tab_id=3)
    assert before.same_place(Target(origin="https://shop.example", url="https://shop.example/b", tab_id=3))
    assert not before.same_place(Target(origin="https://evil.example", url="https://evil.example/", tab_id=3))
    assert not before.same_place(Target(origin="https://shop.example", url="https://shop.example/a", tab_id=4))


def test_a_new_tab_page_is_one_place_under_either_address():
    newtab = Target(origin="chrome://newtab", url="chrome://newtab/", tab_id=3, start_page=True)
    loaded = Target(origin="chrome://new-tab-page-third-party", url="chrome://new-tab-page-third-party/", tab_id=3,
                    start_page=True)
    assert newtab.same_place(loaded)
    # A start page that became a web page meanwhile is not the place judged.
    web = Target(origin="https://shop.example", url="https://shop.example/", tab_id=3)
    assert not newtab.same_place(web) and not web.same_place(newtab)


def test_elements_that_lead_elsewhere_now_are_another_place():
    facts = {"destinations": [{"url": "https://shop.example/pay"}]}
    moved = {"destinations": [{"url": "https://evil.example/pay"}]}
    before = Target(origin="https://shop.example", tab_id=3, facts=facts)
    assert before.same_place(Target(origin="https://shop.example", tab_id=3, facts=facts))
    assert not before.same_place(Target(origin="https://shop.example", tab_id=3, facts=moved))
