"""Tab routes per thread: captured tab, child adoption, closed and replaced tabs."""

from host.browser.routing import MAX_THREADS, Route, TabRoutes


def test_unbound_threads_may_pick_a_tab_and_lock_it():
    routes = TabRoutes()
    assert routes.default("t").kind == Route.UNBOUND
    routes.lock("t", 5)
    assert routes.default("t").tab_id == 5
    routes.end_turn("t")
    assert routes.default("t").kind == Route.UNBOUND


def test_a_submission_without_a_web_page_has_no_target():
    routes = TabRoutes()
    routes.bind("t", None)
    assert routes.default("t").kind == Route.NONE


def test_a_closed_default_is_reported_not_replaced():
    routes = TabRoutes()
    routes.bind("t", 3)
    routes.tab_removed(3)
    route = routes.default("t")
    assert route.kind == Route.CLOSED and route.tab_id == 3


def test_child_tabs_become_the_default_only_from_the_default():
    routes = TabRoutes()
    routes.bind("t", 1)
    assert routes.adopt_child("t", 1, 2) is True
    assert routes.default("t").tab_id == 2
    assert routes.adopt_child("t", 7, 8) is False
    assert routes.default("t").tab_id == 2
    assert routes.describe("t")["driven"] == [2, 8]


def test_replaced_tabs_carry_their_routes():
    routes = TabRoutes()
    routes.bind("t", 1)
    routes.touch("t", 1, wrote=True)
    routes.tab_replaced(1, 11)
    assert routes.default("t").tab_id == 11
    assert routes.driving(11) == ["t"] and routes.driving(1) == []


def test_only_writers_drive_a_tab_until_their_turn_ends():
    routes = TabRoutes()
    routes.touch("reader", 4, wrote=False)
    routes.touch("writer", 4, wrote=True)
    assert routes.driving(4) == ["writer"]
    routes.end_turn("writer")
    assert routes.driving(4) == []


def test_thread_count_is_bounded():
    routes = TabRoutes()
    for i in range(MAX_THREADS + 10):
        routes.bind(f"t{i}", i)
    assert routes.default("t0").kind == Route.UNBOUND
    assert routes.default(f"t{MAX_THREADS + 9}").tab_id == MAX_THREADS + 9
