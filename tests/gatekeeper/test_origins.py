import pytest

from host.gatekeeper.origins import destination, normalize_origin


@pytest.mark.parametrize("text,expected", [
    ("https://WWW.Chase.COM.:443/path", "https://www.chase.com"),
    ("https://www.chase.com..", "https://www.chase.com"),
    ("http://x.com:80", "http://x.com"),
    ("https://x.com:8443", "https://x.com:8443"),
    ("https://bücher.gov", "https://xn--bcher-kva.gov"),
    ("http://0x7f.1", "http://127.0.0.1"),
    ("http://2130706433", "http://127.0.0.1"),
    ("http://0177.0.0.1", "http://127.0.0.1"),
    ("http://127.1", "http://127.0.0.1"),
    ("http://[::ffff:127.0.0.1]", "http://[::ffff:7f00:1]"),
    ("CHROME://settings", "chrome://settings"),
    ("chrome://SETTINGS/x", "chrome://settings"),
    ("chrome-extension://ABCDEF/panel.html", "chrome-extension://abcdef"),
    ("view-source:https://www.chase.com/x", "https://www.chase.com"),
    ("VIEW-SOURCE:view-source:https://a.com", "https://a.com"),
    ("blob:https://x.com/0f3c", "https://x.com"),
    ("filesystem:https://x.com/temporary/a", "https://x.com"),
    ("about:Blank", "about:blank"),
    ("file:///etc/passwd", "file://"),
    ("https://good.com@evil.test/", "https://evil.test"),
    ("", ""),
])
def test_normalize_origin(text, expected):
    assert normalize_origin(text).text == expected


@pytest.mark.parametrize("url,scheme", [
    ("javascript:alert(1)", "javascript"),
    ("JAVASCRIPT:alert(1)", "javascript"),
    ("  JavaScript:alert(1)", "javascript"),
    ("java\tscript:alert(1)", "javascript"),  # the parser drops tabs and newlines
    ("data:text/html,<script>1</script>", "data"),
    ("VBScript:msgbox", "vbscript"),
    ("view-source:javascript:alert(1)", "javascript"),
    ("blob:javascript:alert(1)", "javascript"),
])
def test_script_destinations(url, scheme):
    dest = destination(url)
    assert dest.script and dest.scheme == scheme


def test_scheme_less_destination_is_https():
    dest = destination("chase.com/login")
    assert dest.origin.text == "https://chase.com" and dest.href == "https://chase.com/login"
    assert destination("example.com:8080").origin.text == "https://example.com:8080"


def test_invalid_destination():
    dest = destination("http://exa mple.com")
    assert not dest.valid and not dest.script
