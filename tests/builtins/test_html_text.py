"""HTML to readable Markdown and text: structure kept, page chrome and hidden parts dropped,
links made absolute, and nothing breaks on hostile or broken markup."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from host.builtins.html_text import html_to_text

PAGE = """<!doctype html><html><head><title> Order  status </title><style>.x{}</style>
<script>document.write("injected")</script></head><body>
<nav><a href="/">Home</a> <a href="/shop">Shop</a></nav>
<h1>Your <em>order</em></h1>
<p>Shipped on <b>Monday</b>. <a href="/track?id=7">Track it</a><br>Second line</p>
<p>Unclosed paragraph
<ul><li>one<li>two<ul><li>nested</ul></ul>
<ol start="3"><li>three</li><li>four</li></ol>
<table><tr><th>Item</th><th>Price</th></tr><tr><td>Shirt</td><td>10|20</td></tr></table>
<pre>line 1
  line 2</pre>
<blockquote><p>A quote</p></blockquote>
<div hidden>hidden text</div><div style="display: none">also hidden</div>
<img alt="Logo" src="/logo.png"><img src="/spacer.gif">
<a href="javascript:alert(1)">bad link</a>
<footer>Footer text</footer>
</body></html>"""


def test_markdown_keeps_structure_and_drops_chrome():
    page = html_to_text(PAGE, "https://shop.example/orders/7")
    assert page.title == "Order status"
    text = page.text
    assert text.startswith("# Your *order*")
    assert "Shipped on **Monday**. [Track it](https://shop.example/track?id=7)\nSecond line" in text
    assert "Unclosed paragraph" in text
    assert "- one\n- two\n  - nested" in text
    assert "3. three\n4. four" in text
    assert "| Item | Price |\n| --- | --- |\n| Shirt | 10\\|20 |" in text
    assert "```\nline 1\n  line 2\n```" in text
    assert "> A quote" in text
    assert "![Logo](https://shop.example/logo.png)" in text
    for gone in ("Home", "Footer text", "hidden text", "also hidden", "injected", ".x{}", "javascript:"):
        assert gone not in text
    assert "bad link" in text  # the text stays, the script URL goes


def test_plain_text_has_no_markup():
    text = html_to_text(PAGE, "https://shop.example/", markdown=False).text
    assert text.startswith("Your order")
    assert "Track it" in text and "](" not in text and "**" not in text and "```" not in text
    assert "Shirt | 10|20" in text


def test_main_content_wins_over_the_rest_of_the_page():
    page = html_to_text("<body><div>Menu</div><main><p>Article body</p></main><div>Sidebar</div></body>")
    assert page.text == "Article body"


def test_base_href_and_relative_links():
    page = html_to_text('<head><base href="https://cdn.example/x/"></head><body><a href="y">Y</a></body>',
                        "https://shop.example/")
    assert page.text == "[Y](https://cdn.example/x/y)"


def test_deep_nesting_does_not_blow_the_stack():
    assert html_to_text("<div>" * 20000 + "deep" + "</div>" * 20000).text == "deep"
    assert html_to_text("<ul><li>" * 3000 + "x").text.startswith("- ")


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("<>/=\"' abcdiv&#;!-pulohtrx\n")), max_size=300))
def test_any_markup_gives_text_without_raising(markup):
    page = html_to_text(markup, "https://example.com/")
    assert isinstance(page.text, str) and isinstance(page.title, str)
