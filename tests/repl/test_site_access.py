"""How the REPL explains site access: what a typed site means, what a grant and a revoke print,
and the launch line that grants it without losing a site granted already. The host's edit of
the run's extension copy, and the launch's own reading of a site, are here too."""

from __future__ import annotations

import pytest

from host.launch.errors import LaunchError
from host.launch.profile import site_access_pattern
from host.repl.errors import UsageError
from host.repl.site_access import explain, relaunch_line, site_origin


def test_a_typed_site_becomes_an_origin_or_a_usage_error():
    assert site_origin("example.com") == "https://example.com"
    assert site_origin("http://127.0.0.1:8080/l1/form.html?x=1") == "http://127.0.0.1:8080"
    for bad in ("file:///etc/passwd", "https://*.example.com", "chrome://newtab", ""):
        with pytest.raises(UsageError, match="is not a web site"):
            site_origin(bad)


def test_the_launch_line_keeps_every_granted_site():
    assert relaunch_line([], "https://example.com") == 'make launch LAUNCH_ARGS="--site-access https://example.com"'
    assert relaunch_line(["https://a.example/*", "https://example.com/*"], "https://example.com") == \
        "make launch LAUNCH_ARGS=\"--site-access 'https://a.example/*' --site-access https://example.com\""
    assert explain({"origin": "https://example.com", "granted": True}).startswith("Tabwarden already has access")
    with pytest.raises(UsageError, match="the REPL cannot grant it here"):
        explain({"origin": "https://example.com", "granted": False, "origins": []})


def test_the_launch_option_takes_an_origin_or_a_match_pattern():
    assert site_access_pattern("https://example.com") == "https://example.com/*"
    assert site_access_pattern("http://127.0.0.1/*") == "http://127.0.0.1/*"
    assert site_access_pattern("<all_urls>") == "<all_urls>"
    with pytest.raises(LaunchError, match="is not a site"):
        site_access_pattern("example.com")


def test_without_a_copy_of_its_own_the_host_says_why_and_the_repl_how():
    with pytest.raises(UsageError) as raised:
        explain({"origin": "https://example.com", "granted": False, "origins": ["http://127.0.0.1/*"]},
                "this browser was not started by `tabwarden launch`")
    message = str(raised.value)
    assert "cannot grant it here (this browser was not started by `tabwarden launch`)" in message
    assert message.endswith("--site-access 'http://127.0.0.1/*' --site-access https://example.com\"")


def test_what_a_grant_and_a_revoke_print():
    from host.repl.site_access import granted_line, revoked_line

    answer = {"origin": "https://example.com", "pattern": "https://example.com/*", "restarting": True}
    assert granted_line(answer, 42) == (
        "Granted Tabwarden access to https://example.com (https://example.com/*): page tools can run there. The "
        "extension reloaded to take it, and the host restarted with it: now attached to host pid 42. Its threads, "
        "rules and approvals carried over; background events of the old host's `tw.watch` stopped.")
    assert revoked_line({**answer, "revoked": False}, 42) == \
        "Tabwarden had no access to https://example.com: nothing to take back."


def test_the_host_writes_only_the_copy_it_was_named(tmp_path, monkeypatch):
    import json

    from host.browser import site_grant

    monkeypatch.delenv(site_grant.EXTENSION_COPY_ENV, raising=False)
    with pytest.raises(site_grant.SiteGrantRefused, match="only the side panel's grant"):
        site_grant.extension_copy()
    copy = tmp_path / "extension"
    copy.mkdir()
    monkeypatch.setenv(site_grant.EXTENSION_COPY_ENV, str(copy))
    with pytest.raises(site_grant.SiteGrantRefused, match="no manifest.json"):
        site_grant.extension_copy()
    (copy / "manifest.json").write_text(json.dumps({"name": "t", "host_permissions": ["http://127.0.0.1/*"]}))
    assert site_grant.add_site(site_grant.extension_copy(), "https://example.com/*") == [
        "http://127.0.0.1/*", "https://example.com/*"]
    assert site_grant.remove_site(copy, "http://127.0.0.1/*") == ["https://example.com/*"]
    assert json.loads((copy / "manifest.json").read_text()) == {"name": "t", "host_permissions": ["https://example.com/*"]}


def test_developer_mode_is_set_and_other_preferences_kept(tmp_path):
    import json

    from host.launch.profile import allow_unpacked_reload

    prefs = tmp_path / "Default" / "Preferences"
    prefs.parent.mkdir()
    prefs.write_text(json.dumps({"browser": {"x": 1}, "extensions": {"ui": {"other": 2}}}))
    allow_unpacked_reload(tmp_path)
    assert json.loads(prefs.read_text()) == {"browser": {"x": 1}, "extensions": {"ui": {"other": 2, "developer_mode": True}}}
