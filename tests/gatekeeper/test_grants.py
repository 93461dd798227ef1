import pytest

from host.gatekeeper.errors import GatekeeperUnavailable, InvalidInput
from host.gatekeeper.grants import SessionGrants
from host.gatekeeper.storage.schema import COMPONENT, MIGRATIONS
from host.gatekeeper.service import CheckRequest

from .faults import FlakyStore


@pytest.fixture
def flaky(tmp_path):
    s = FlakyStore(tmp_path / "g.sqlite3")
    s.migrate(COMPONENT, MIGRATIONS)
    yield s
    s.close()


def test_grants_survive_a_restart_in_the_same_browser_session(flaky):
    grants = SessionGrants(flaky)
    grants.bind("browser-1")
    grants.grant("t1", "click", "https://a.com")
    again = SessionGrants(flaky)
    again.bind("browser-1")
    assert again.has("t1", "click", "https://a.com")
    assert not again.has("t2", "click", "https://a.com")  # per thread


def test_grants_of_another_browser_session_are_dropped(flaky):
    grants = SessionGrants(flaky)
    grants.bind("browser-1")
    grants.grant("t1", "click", "https://a.com")
    other = SessionGrants(flaky)
    other.bind("browser-2")
    assert not other.has("t1", "click", "https://a.com")
    back = SessionGrants(flaky)
    back.bind("browser-1")
    assert not back.has("t1", "click", "https://a.com")  # gone for good


def test_no_grant_before_a_browser_session():
    grants = SessionGrants(None)
    with pytest.raises(InvalidInput):
        grants.grant("t1", "click", "https://a.com")


def test_bounds_keep_the_newest(flaky):
    grants = SessionGrants(flaky, max_threads=3, max_keys=4)
    grants.bind("b")
    for i in range(6):
        grants.grant("t", "click", f"https://{i}.com")
    assert [o for _, o in grants.snapshot()["t"]] == [f"https://{i}.com" for i in range(2, 6)]
    for t in ("u", "v", "w"):
        grants.grant(t, "click", "https://a.com")
    assert set(grants.snapshot()) == {"u", "v", "w"}  # the least recently touched thread went
    reloaded = SessionGrants(flaky, max_threads=3, max_keys=4)
    reloaded.bind("b")
    assert reloaded.snapshot() == grants.snapshot()


def test_invalid_grants_are_refused(flaky):
    grants = SessionGrants(flaky)
    grants.bind("b")
    with pytest.raises(InvalidInput):
        grants.grant("", "click", "https://a.com")
    with pytest.raises(InvalidInput):
        grants.grant("t" * 513, "click", "https://a.com")
    with pytest.raises(InvalidInput):
        grants.grant("t", "click", "https://" + "a" * 5000)


def test_write_failure_fails_closed(flaky):
    grants = SessionGrants(flaky)
    grants.bind("b")
    grants.grant("t1", "click", "https://a.com")
    flaky.fail_writes = True
    with pytest.raises(GatekeeperUnavailable):
        grants.grant("t1", "type", "https://a.com")
    flaky.fail_writes = False
    for call in (lambda: grants.has("t1", "click", "https://a.com"), lambda: grants.for_thread("t1"),
                 lambda: grants.grant("t1", "click", "https://b.com")):
        with pytest.raises(GatekeeperUnavailable):
            call()


def test_corrupt_stored_grant_fails_hydration(flaky):
    flaky.execute("INSERT INTO gk_session_grants VALUES ('b', '', 'click', 'https://a.com', 1)")
    grants = SessionGrants(flaky)
    with pytest.raises(GatekeeperUnavailable):
        grants.bind("b")
    with pytest.raises(GatekeeperUnavailable):
        grants.has("x", "click", "https://a.com")


def test_a_storage_failure_closes_every_check_until_the_store_answers_again(tmp_path, make_gatekeeper):
    store = FlakyStore(tmp_path / "gk.sqlite3")
    gk = make_gatekeeper(store)
    gk.bind_browser_session("b")
    request = CheckRequest(thread_id="t", tool="click", params={"ref": "a"}, origin="https://a.com")
    assert gk.check(request).verdict == "ask"
    gk.apply_decision(thread_id="t", approval_id="a0", tool="click", target_origin="https://a.com",
                      kind="acceptForSession")
    store.fail_writes = True
    with pytest.raises(GatekeeperUnavailable):
        gk.apply_decision(thread_id="t", approval_id="a1", tool="click", target_origin="https://b.com",
                          kind="acceptForSession")
    for _ in range(3):  # every check while the fault lasts, whoever asks
        with pytest.raises(GatekeeperUnavailable):
            gk.check(request)
        with pytest.raises(GatekeeperUnavailable):
            gk.check(CheckRequest(thread_id="other", tool="read_page", origin="https://a.com"))
    assert gk.closed_because.startswith("storage unavailable: ")
    store.fail_writes = False
    gk._healer._next_at = 0  # the delay since the last attempt has passed
    assert gk.check(request).code == "session_grant"  # open again, the grant made before the fault kept
    assert gk.closed_because is None
    # What failed during the fault was never half-made: the grant it tried is not there.
    assert not gk.grants.has("t", "click", "https://b.com")


def test_an_audit_write_failure_fails_closed_and_leaves_the_chain_whole(tmp_path, make_gatekeeper):
    store = FlakyStore(tmp_path / "gk.sqlite3")
    gk = make_gatekeeper(store)
    gk.check(CheckRequest(thread_id="t", tool="read_page", origin="https://a.com"))
    before = gk.audit.verify().rows
    store.fail_writes = True
    with pytest.raises(GatekeeperUnavailable):  # an unaudited call must not run
        gk.check(CheckRequest(thread_id="t", tool="click", origin="https://a.com"))
    store.fail_writes = False
    gk._healer._next_at = 0
    gk.check(CheckRequest(thread_id="t", tool="click", origin="https://a.com"))
    verified = gk.audit.verify()
    assert verified.ok and verified.rows == before + 2  # the refusal, written late, and the check


def test_unreadable_store_at_start_fails_closed(tmp_path, make_gatekeeper):
    store = FlakyStore(tmp_path / "gk.sqlite3")
    store.fail_reads = True
    gk = make_gatekeeper(store)
    assert gk.error is not None
    with pytest.raises(GatekeeperUnavailable):
        gk.check(CheckRequest(thread_id="t", tool="read_page", origin="https://a.com"))


def test_unreadable_rules_at_load_fail_closed_without_raising(tmp_path, make_gatekeeper):
    store = FlakyStore(tmp_path / "gk.sqlite3")
    store.fail_reads_of = "FROM gk_rules ORDER BY"
    gk = make_gatekeeper(store)  # constructing never raises: the host must still start and answer
    assert gk.error is not None
    with pytest.raises(GatekeeperUnavailable):
        gk.check(CheckRequest(thread_id="t", tool="click", origin="https://a.com"))
