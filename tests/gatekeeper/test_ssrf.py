import ipaddress
import socket

import pytest

from host.gatekeeper.ssrf import SsrfBlocked, check_host, check_ip, check_url, resolve_and_check


@pytest.mark.parametrize("url,kind", [
    ("http://127.0.0.1/", "loopback"),
    ("http://2130706433/", "loopback"),  # decimal
    ("http://0x7f000001/", "loopback"),  # hex
    ("http://0x7f.1/", "loopback"),  # short hex
    ("http://017700000001/", "loopback"),  # octal
    ("http://0177.0.0.1/", "loopback"),
    ("http://127.1/", "loopback"),  # short
    ("http://127.0.0.1./", "loopback"),  # trailing dot
    ("http://[::1]/", "loopback"),
    ("http://[::ffff:127.0.0.1]/", "loopback"),  # IPv4-mapped
    ("http://[::ffff:7f00:1]/", "loopback"),
    ("http://[::127.0.0.1]/", "loopback"),  # IPv4-compatible
    ("http://[2002:7f00:1::]/", "loopback"),  # 6to4
    ("http://[64:ff9b::a00:1]/", "private"),  # NAT64 of 10.0.0.1
    ("http://localhost/", "internal host"),
    ("http://LOCALHOST./", "internal host"),
    ("http://app.localhost/", "internal host"),
    ("http://printer.local/", "internal host"),
    ("http://db.internal/", "internal host"),
    ("http://intranet/", "internal host"),
    ("http://10.0.0.1/", "private"),
    ("http://172.16.5.4/", "private"),
    ("http://192.168.1.1/", "private"),
    ("http://0300.0250.1.1/", "private"),  # octal 192.168.1.1
    ("http://[fd12:3456::1]/", "private"),
    ("http://169.254.1.1/", "link-local"),
    ("http://[fe80::1]/", "link-local"),
    ("http://100.64.0.1/", "carrier-grade NAT"),
    ("http://224.0.0.251/", "multicast"),
    ("http://[ff02::1]/", "multicast"),
    ("http://0.0.0.0/", "unspecified"),
    ("http://0/", "unspecified"),
    ("http://[::]/", "unspecified"),
    ("http://255.255.255.255/", "broadcast"),
    ("http://169.254.169.254/latest/meta-data/", "metadata"),
    ("http://[fd00:ec2::254]/", "metadata"),
    ("http://metadata.google.internal/", "metadata"),
    ("http://100.100.100.200/", "metadata"),
    # Userinfo tricks: refused outright, whichever side the private host is on.
    ("http://example.com@127.0.0.1/", "credentials"),
    ("http://127.0.0.1@example.com/", "credentials"),
    ("http://user:pw@example.com/", "credentials"),
    ("file:///etc/passwd", "only http and https"),
    ("gopher://example.com/", "only http and https"),
])
def test_blocked(url, kind):
    reason = check_url(url)
    assert reason is not None and kind in reason


@pytest.mark.parametrize("url", ["https://example.com/", "http://93.184.215.14/", "https://[2606:4700::1111]/",
                                 "https://docs.python.org./3/"])
def test_public(url):
    assert check_url(url) is None


@pytest.mark.parametrize("ip,blocked", [("127.0.0.1", True), ("::1", True), ("::ffff:10.0.0.1", True),
                                        ("8.8.8.8", False), ("2001:4860:4860::8888", False),
                                        ("fe80::1%eth0", True), ("not-an-ip", True),
                                        (ipaddress.ip_address("192.168.0.1"), True)])
def test_check_ip_at_connect_time(ip, blocked):
    assert (check_ip(ip) is not None) is blocked


@pytest.mark.parametrize("host,why", [("::1", "loopback"), ("[::1]", "loopback"), ("fe80::1%eth0", "link"),
                                      ("::ffff:127.0.0.1", "loopback"), ("127.0.0.1", "loopback")])
def test_bare_ip_literals_are_judged_as_addresses(host, why):
    reason = check_host(host)
    assert reason is not None and why in reason.lower() and "single-label" not in reason


@pytest.mark.parametrize("host", ["2606:4700::1111", "[2606:4700::1111]", "93.184.215.14", "example.com"])
def test_public_hosts_pass_in_every_spelling(host):
    assert check_host(host) is None


def test_resolved_addresses_are_checked(monkeypatch):
    def fake(host, port, type=0):
        answers = {"rebind.example": ["93.184.215.14", "127.0.0.1"], "ok.example": ["93.184.215.14"]}
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port)) for a in answers[host]]

    monkeypatch.setattr(socket, "getaddrinfo", fake)
    assert resolve_and_check("ok.example") == ["93.184.215.14"]
    with pytest.raises(SsrfBlocked, match="127.0.0.1"):
        resolve_and_check("rebind.example")  # one private answer taints the name
    with pytest.raises(SsrfBlocked):
        resolve_and_check("localhost")  # refused before any lookup
