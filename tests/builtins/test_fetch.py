"""fetch_url's network side: the guarded transport connects only to checked addresses, every
redirect is checked again, and size, type and time limits hold. A "public" site runs on
127.0.0.2 (reached as pages.test through a test resolver); 127.0.0.1 plays the private network."""

from __future__ import annotations

import asyncio

import pytest

from host.builtins.fetch import FetchFailed, fetch
from host.builtins.netguard import TEST_HOOKS_ENV, GuardedResolver, MappedResolver, resolver_from_env
from host.gatekeeper.ssrf import SsrfBlocked
from tests.support.scripted_site import Site, html, redirect

LOOPBACK_SPELLINGS = [
    "http://127.0.0.1:{port}/secret", "http://localhost:{port}/secret", "http://2130706433:{port}/secret",
    "http://0x7f.1:{port}/secret", "http://0177.0.0.1:{port}/secret", "http://127.1:{port}/secret",
    "http://[::1]:{port}/secret", "http://[::ffff:127.0.0.1]:{port}/secret", "http://good@127.0.0.1:{port}/secret",
    "http://127.0.0.1.:{port}/secret", "http://0.0.0.0:{port}/secret", "http://169.254.169.254/latest/meta-data/",
    "http://metadata.google.internal/computeMetadata/v1/", "http://[fd00:ec2::254]/latest",
    "http://100.100.100.200/latest", "http://LOCALHOST:{port}/secret", "http://printer.local/",
]


@pytest.fixture(scope="module")
def sites():
    private = Site("127.0.0.1", {"/secret": html("<p>internal secret</p>")})
    public = Site("127.0.0.2")
    with private, public:
        public.routes.update({
            "/page.html": html("<title>Hello</title><body><h1>Hello</h1><p>From <a href='/x'>the site</a></p></body>"),
            "/plain.txt": (200, {"Content-Type": "text/plain; charset=latin-1"}, "café".encode("latin-1")),
            "/to-private": redirect(f"http://127.0.0.1:{private.port}/secret"),
            "/to-private-decimal": redirect(f"http://2130706433:{private.port}/secret"),
            "/to-inner": redirect(f"http://inner.test:{private.port}/secret"),
            "/to-same": redirect("/page.html", 301),
            "/to-other": redirect(f"http://other.test:{public.port}/page.html"),
            "/to-ftp": redirect("ftp://pages.test/file"),
            "/loop": redirect("/loop"),
            "/big": html("<p>" + "x" * 50_000 + "</p>"),
            "/image.png": (200, {"Content-Type": "image/png"}, b"\x89PNG\r\n\x1a\n\x00\x00"),
            "/missing-type": (200, {}, b"<!doctype html><p>sniffed</p>"),
            "/gone": html("<p>No such order</p>", 404),
            "/slow": lambda: (public.release.wait(30), html("<p>late</p>"))[1],
        })
        yield public, private


@pytest.fixture
def resolver():
    return MappedResolver({"pages.test": ("127.0.0.2", True), "other.test": ("127.0.0.2", True),
                           "inner.test": ("127.0.0.1", False)})


async def test_a_public_page_comes_back_as_markdown(sites, resolver):
    public, _ = sites
    got = await fetch(public.url("pages.test", "/page.html"), resolver=resolver)
    assert (got.status, got.content_type, got.title) == (200, "text/html", "Hello")
    assert got.text == f"# Hello\n\nFrom [the site](http://pages.test:{public.port}/x)"
    plain = await fetch(public.url("pages.test", "/plain.txt"), resolver=resolver)
    assert plain.text == "café"  # the declared charset is used


@pytest.mark.parametrize("spelling", LOOPBACK_SPELLINGS)
async def test_loopback_private_and_metadata_are_refused_by_default(sites, spelling):
    _, private = sites
    url = spelling.format(port=private.port)
    with pytest.raises(FetchFailed) as refused:
        await fetch(url, resolver=GuardedResolver(), timeout_s=5)
    assert refused.value.code == "ssrf_blocked", refused.value
    assert private.hits == []


@pytest.mark.parametrize("path", ["/to-private", "/to-private-decimal"])
async def test_a_redirect_to_a_private_address_is_refused(sites, resolver, path):
    public, private = sites
    before = len(private.hits)
    with pytest.raises(FetchFailed) as refused:
        await fetch(public.url("pages.test", path), resolver=resolver)
    assert refused.value.code == "ssrf_blocked" and "redirects to" in refused.value.message
    assert len(private.hits) == before  # nothing reached the private server


async def test_a_name_that_resolves_privately_is_refused_at_connect_time(sites, resolver):
    _, private = sites
    with pytest.raises(FetchFailed) as refused:
        await fetch(f"http://inner.test:{private.port}/secret", resolver=resolver)
    assert refused.value.code == "ssrf_blocked" and "loopback" in refused.value.message
    assert private.hits == []


class Rebinding:
    """A name that answers with a public address first, then a private one (DNS rebinding)."""

    def __init__(self) -> None:
        self.answers = 0

    def resolve(self, host: str, port: int) -> list[str]:
        self.answers += 1
        first = MappedResolver({host: ("127.0.0.2", True)})
        later = MappedResolver({host: ("127.0.0.1", False)})
        return (first if self.answers == 1 else later).resolve(host, port)


async def test_a_same_origin_redirect_after_rebinding_is_refused(sites):
    public, _ = sites
    rebinding = Rebinding()
    with pytest.raises(FetchFailed) as refused:
        await fetch(public.url("rebind.test", "/to-same"), resolver=rebinding)
    assert refused.value.code == "ssrf_blocked" and rebinding.answers == 2


async def test_redirects_within_the_origin_are_followed_and_others_reported(sites, resolver):
    public, _ = sites
    same = await fetch(public.url("pages.test", "/to-same"), resolver=resolver)
    assert same.title == "Hello" and same.redirects == [public.url("pages.test", "/page.html")]
    other = await fetch(public.url("pages.test", "/to-other"), resolver=resolver)
    assert other.redirected_to == public.url("other.test", "/page.html") and other.text == ""
    with pytest.raises(FetchFailed) as scheme:
        await fetch(public.url("pages.test", "/to-ftp"), resolver=resolver)
    assert scheme.value.code == "ssrf_blocked"
    with pytest.raises(FetchFailed) as looping:
        await fetch(public.url("pages.test", "/loop"), resolver=resolver)
    assert looping.value.code == "too_many_redirects"


async def test_size_type_status_and_time_limits(sites, resolver):
    public, _ = sites
    big = await fetch(public.url("pages.test", "/big"), resolver=resolver, max_bytes=4096)
    assert big.truncated and len(big.text) < 4096
    with pytest.raises(FetchFailed) as binary:
        await fetch(public.url("pages.test", "/image.png"), resolver=resolver)
    assert binary.value.code == "not_text"
    assert (await fetch(public.url("pages.test", "/missing-type"), resolver=resolver)).text == "sniffed"
    gone = await fetch(public.url("pages.test", "/gone"), resolver=resolver)
    assert gone.status == 404 and gone.text == "No such order"
    with pytest.raises(FetchFailed) as slow:
        await fetch(public.url("pages.test", "/slow"), resolver=resolver, timeout_s=0.5)
    assert slow.value.code == "timeout"


def test_the_guarded_resolver_judges_literals_and_names():
    resolver = GuardedResolver()
    for host in ("127.0.0.1", "::1", "[::1]", "10.1.2.3", "169.254.169.254", "localhost", "intranet"):
        with pytest.raises(SsrfBlocked):
            resolver.resolve(host, 80)
    assert resolver.resolve("93.184.215.14", 80) == ["93.184.215.14"]
    assert resolver.resolve("2606:4700::1111", 443) == ["2606:4700::1111"]


def test_test_hosts_need_the_test_hooks_switch():
    mapping = '{"pages.test": {"address": "127.0.0.2", "public": true}}'
    assert isinstance(resolver_from_env({"TABWARDEN_TEST_FETCH_HOSTS": mapping}), GuardedResolver)
    hooked = resolver_from_env({"TABWARDEN_TEST_FETCH_HOSTS": mapping, TEST_HOOKS_ENV: "1"})
    assert hooked.resolve("pages.test", 80) == ["127.0.0.2"]
    with pytest.raises(SsrfBlocked):
        hooked.resolve("localhost", 80)  # everything else is judged as usual
    bad = resolver_from_env({"TABWARDEN_TEST_FETCH_HOSTS": '{"x": {"address": "nope"}}', TEST_HOOKS_ENV: "1"})
    assert isinstance(bad, GuardedResolver)


async def test_concurrent_fetches_stay_separate(sites, resolver):
    public, _ = sites
    pages = await asyncio.gather(*[fetch(public.url("pages.test", "/page.html"), resolver=resolver) for _ in range(5)])
    assert {p.title for p in pages} == {"Hello"}
