import pytest

from host.gatekeeper.origins import normalize_origin
from host.gatekeeper.patterns import OriginSet, PatternError, parse_origin_pattern, parse_tool_pattern


def matches(pattern: str, origin: str) -> bool:
    return OriginSet.parse([pattern]).match(normalize_origin(origin)) is not None


@pytest.mark.parametrize("pattern,origin,expected", [
    ("*", "https://a.com", True),
    ("*", "", True),
    ("", "", True),
    ("", "https://a.com", False),
    ("https://a.com", "", False),
    # *.d: apex and subdomains, any scheme and port.
    ("*.example.com", "https://example.com", True),
    ("*.example.com", "http://a.b.example.com:8080", True),
    ("*.example.com", "https://notexample.com", False),
    ("*.X.com", "https://a.x.com", True),  # patterns are normalised like origins
    ("*.x.com.", "https://a.x.com", True),
    ("*.gov", "https://gov", True),
    ("*.bücher.example", "https://www.xn--bcher-kva.example", True),
    # Scheme-qualified origins are exact.
    ("https://bank.example", "https://bank.example:443", True),
    ("https://bank.example", "https://bank.example.evil", False),
    ("https://bank.example", "https://bank.example@evil.test", False),
    ("https://x.com", "http://x.com", False),
    ("HTTPS://X.COM", "https://x.com", True),
    ("https://*.x.com", "https://a.x.com", True),
    ("https://*.x.com", "http://a.x.com", False),
    # Bare hosts: any scheme and port, no subdomains.
    ("pay.google.com", "http://pay.google.com", True),
    ("pay.google.com", "https://pay.google.com:8443", True),
    ("pay.google.com", "https://sub.pay.google.com", False),
    ("localhost:8080", "http://localhost:8080", True),
    ("localhost:8080", "http://localhost:9090", False),
    ("0x7f.1", "http://127.0.0.1", True),
    # Scheme wildcards.
    ("chrome://*", "CHROME://settings", True),
    ("about:*", "about:blank", True),
    ("chrome://*", "chrome-extension://abc", False),
])
def test_origin_matching(pattern, origin, expected):
    assert matches(pattern, origin) is expected


@pytest.mark.parametrize("bad", ["a*b", "*.", "https://", "x.com/path", "user@x.com", 42, "x.com:99999", "*x.com"])
def test_bad_origin_patterns(bad):
    with pytest.raises(PatternError):
        parse_origin_pattern(bad)


def test_tool_patterns():
    assert parse_tool_pattern("*").kind == "any"
    assert parse_tool_pattern("mcp__github__*") == ("mcp__github__*", "prefix", "mcp__github__")
    assert parse_tool_pattern("category:eval").value == "eval"
    assert parse_tool_pattern("artifact_create").value == "artifact"
    for bad in ("category:nope", "two words", "*a*", "", 3):
        with pytest.raises(PatternError):
            parse_tool_pattern(bad)


def test_most_specific_pattern_is_reported():
    found = OriginSet.parse(["*.chase.com", "https://www.chase.com"]).match(normalize_origin("https://www.chase.com"))
    assert found.text == "https://www.chase.com"
