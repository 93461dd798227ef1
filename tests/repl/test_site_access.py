"""How the REPL explains site access: what a typed site means, and the launch line that grants
it without losing a site granted already. The launch option's own reading of a site is here too."""

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
    with pytest.raises(UsageError, match="the REPL cannot grant it"):
        explain({"origin": "https://example.com", "granted": False, "origins": []})


def test_the_launch_option_takes_an_origin_or_a_match_pattern():
    assert site_access_pattern("https://example.com") == "https://example.com/*"
    assert site_access_pattern("http://127.0.0.1/*") == "http://127.0.0.1/*"
    assert site_access_pattern("<all_urls>") == "<all_urls>"
    with pytest.raises(LaunchError, match="is not a site"):
        site_access_pattern("example.com")
