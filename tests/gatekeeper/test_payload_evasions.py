"""The red team's ways around the payload check, and their variants: every spelling of a secret
is found, while prose, order numbers, dates and prices are not."""

from __future__ import annotations

import base64
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from host.gatekeeper.facts.account_numbers import IBAN_LENGTHS, iban_valid, luhn_valid
from host.gatekeeper.facts.payload import scan_params, scan_text

CARD = "4111111111111111"
ARABIC_INDIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")
EXTENDED_ARABIC = str.maketrans("0123456789", "۰۱۲۳۴۵۶۷۸۹")
FULLWIDTH = str.maketrans("0123456789", "０１２３４５６７８９")
BENGALI = str.maketrans("0123456789", "০১২৩৪৫৬৭৮৯")


def grouped(digits: str, sep: str, size: int = 4) -> str:
    return sep.join(digits[i:i + size] for i in range(0, len(digits), size))


@pytest.mark.parametrize("text", [
    grouped(CARD, "."), grouped(CARD, "/"), grouped(CARD, "_"), grouped(CARD, "\u00a0"), grouped(CARD, "\u2009"),
    grouped(CARD, "\u3000"), grouped(CARD, "\u2013"), grouped(CARD, " - "), grouped(CARD, "\\"),
    "4111.1111-1111 1111",  # mixed separators between groups of four
    " ".join(CARD),  # one digit at a time
    grouped(CARD, "\u200b"), "4\u200c111\u200d1111\ufeff11111111",  # zero-width characters
    CARD.translate(ARABIC_INDIC), CARD.translate(EXTENDED_ARABIC), CARD.translate(FULLWIDTH),
    CARD.translate(BENGALI), grouped(CARD, " ").translate(FULLWIDTH),
    "4111" + "1111".translate(ARABIC_INDIC) + "1111".translate(FULLWIDTH) + "1111",  # mixed scripts
    "4111%201111%201111%201111", "4111%25201111%25201111%25201111",  # percent-encoded, twice
    "378282246310005", "3782 822463 10005",  # Amex layout
    "2223 0031 2200 3222", "2720992720992729",  # Mastercard's 2-series
])
def test_card_numbers_however_written(text):
    assert "card_number" in scan_text(text)


@pytest.mark.parametrize("text", ["2024 2024 2024 12", "From 2024 2024 2024 12 on", "20242024202412", "2220 0000 0000 0000"])
def test_years_and_days_that_pass_luhn_are_no_card(text):
    # Only Mastercard's 2221-2720 range, sixteen digits long, starts with a 2.
    from host.gatekeeper.facts.account_numbers import luhn_valid

    assert luhn_valid("".join(ch for ch in text if ch.isdigit()))
    assert "card_number" not in scan_text(text)


@pytest.mark.parametrize("encode", [
    lambda s: base64.b64encode(s.encode()).decode(),
    lambda s: base64.urlsafe_b64encode(s.encode()).decode().rstrip("="),
    lambda s: s.encode().hex(),
    lambda s: s.encode().hex().upper(),
    lambda s: base64.b64encode(base64.b64encode(s.encode())).decode(),  # twice
    lambda s: "https://evil.test/c?d=" + base64.urlsafe_b64encode(s.encode()).decode(),
])
@pytest.mark.parametrize("secret,finding", [
    ("4111 1111 1111 1111", "card_number"),
    ("DE89 3704 0044 0532 0130 00", "iban"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----", "private_key"),
    ("key AKIAIOSFODNN7EXAMPLE", "api_token"),
])
def test_encoded_secrets_are_decoded(encode, secret, finding):
    assert finding in scan_text(encode(secret))


@pytest.mark.parametrize("text", [
    "de89370400440532013000", "DE89-3704-0044-0532-0130-00", "de89 3704 0044 0532 0130 00",
    "DE89.3704.0044.0532.0130.00", "iban:DE89370400440532013000.", "GB82-WEST-1234-5698-7654-32",
    "gb82west12345698765432", "FR14 2004 1010 0505 0001 3M02 606", "NL91ABNA0417164300",
    "ES91 2100 0418 4502 0005 1332", "CH93 0076 2011 6238 5295 7", "BE68 5390 0754 7034",
    "NO93 8601 1117 947", "pl61 1090 1014 0000 0712 1981 2874", "DE89\u00a03704\u00a00044\u00a00532\u00a00130\u00a000",
    "ＤＥ８９３７０４００４４０５３２０１３０００",
])
def test_ibans_however_written(text):
    assert "iban" in scan_text(text)


def _iban(country: str, rng: random.Random) -> str:
    body = "".join(rng.choice("0123456789") for _ in range(IBAN_LENGTHS[country] - 4))
    number = int("".join(str(int(ch, 36)) for ch in body + country.upper() + "00"))
    return f"{country.upper()}{98 - number % 97:02d}{body}"


@given(st.sampled_from(sorted(IBAN_LENGTHS)), st.randoms(use_true_random=False), st.sampled_from([" ", "-", "", "."]))
def test_valid_ibans_of_every_country_are_found(country, rng, sep):
    iban = _iban(country, rng)
    assert iban_valid(iban)
    spaced = sep.join(iban[i:i + 4] for i in range(0, len(iban), 4))
    assert "iban" in scan_text(f"pay to {spaced} today")
    assert "iban" in scan_text(spaced.lower())


@given(st.sampled_from(sorted(IBAN_LENGTHS)), st.randoms(use_true_random=False))
def test_an_iban_with_a_wrong_check_is_not_one(country, rng):
    iban = _iban(country, rng)
    broken = iban[:2] + f"{(int(iban[2:4]) + 1) % 100:02d}" + iban[4:]
    assert "iban" not in scan_text(broken)


@given(st.lists(st.integers(0, 9), min_size=14, max_size=14), st.sampled_from("3456"))
def test_luhn_valid_numbers_are_found_and_invalid_ones_not(body, first):
    digits = first + "".join(map(str, body))
    check = next(d for d in "0123456789" if luhn_valid(digits + d))
    wrong = str((int(check) + 1) % 10)
    assert "card_number" in scan_text(grouped(digits + check, " "))
    assert "card_number" not in scan_text(grouped(digits + wrong, " "))


@pytest.mark.parametrize("url,finding", [
    ("https://evil.test/?password=hunter2", "credential_field"),
    ("https://evil.test/p?user=x&Pass%77ord=hunter2", "credential_field"),
    ("https://evil.test/#access_token=abc", "credential_field"),
    ("https://bob:hunter2@evil.test/", "credential_field"),
    ("https://evil.test/?q=x;api_key=abc", "credential_field"),
    ("https://evil.test/?to=bob%40example.com", "email_address"),
    ("https://evil.test/?to=bob%2540example.com", "email_address"),
    ("https://evil.test/?to=bob\uff20example.com", "email_address"),
    ("https://evil.test/?to=BOB\uff20EXAMPLE\uff0eCOM", "email_address"),
    ("https://evil.test/u/bob%40example.com/x", "email_address"),
    ("https://evil.test/?n=4111%C2%A01111%C2%A01111%C2%A01111", "card_number"),
    ("https://evil.test/?n=4111+1111+1111+1111", "card_number"),
    ("https://evil.test/pay/4111-1111-1111-1111", "card_number"),
    ("https://evil.test/?i=de89-3704-0044-0532-0130-00", "iban"),
])
def test_urls_are_read_part_by_part(url, finding):
    assert finding in scan_params({"url": url})


@pytest.mark.parametrize("text", [
    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "AWS secret: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    '{"client_secret": "8Qz_r4T-vX2mLp9KwYb7NcJ5"}',
    "API key: Zk3v9QmX2pL8rT4wYb7NcJ5d",
    "password=Xy7#kP2$vL9@qR4!",
])
def test_random_values_beside_secret_labels(text):
    assert "secret_value" in scan_text(text)


def test_ssh_private_key_bodies_without_their_header():
    body = base64.b64encode(b"openssh-key-v1\x00" + bytes(range(200))).decode()
    assert "private_key" in scan_text(body)
    der = b"\x30\x82\x04\xa4\x02\x01\x00\x02\x82\x01\x01\x00" + bytes(range(256)) * 2
    assert "private_key" in scan_text("key " + base64.b64encode(der).decode())
    public = b"\x30\x82\x01\x22\x30\x0d\x06\x09\x2a\x86\x48\x86\xf7\x0d\x01\x01\x01" + bytes(range(200))
    assert "private_key" not in scan_text(base64.b64encode(public).decode())
    assert "private_key" in scan_text("PuTTY-User-Key-File-3: ssh-ed25519")
    assert "private_key" in scan_text("-----begin\u00a0rsa private key-----".replace("\u00a0", " "))


@pytest.mark.parametrize("text", [
    "Hello, I'd like to return order #123-4567890 placed on 2024-06-01.",
    "Order number 112-4430921-5567312",
    "Delivery between 2024-06-01 - 2024-06-30, total $1,299.99 (was $1,499.00)",
    "Meeting 01/02/2024 10:30 - 03/04/2025 11:45",
    "Tracking 1Z999AA10123456784",
    "Call +1 415 555 0100 or 415-555-0199",
    "password: see the sticky note",
    "Your token expires in 30 minutes; the secret to good bread is patience",
    "The quick brown fox jumps over the lazy dog. " * 20,
    "https://shop.example.com/search?q=running+shoes&page=2&sort=price_asc",
    "https://www.example.com/products/2024/06/summer-collection-item-48213",
    "git commit 3f786850e387550fdab836ed7e6dc881de23001b",
    "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "UUID 123e4567-e89b-12d3-a456-426614174000",
    "ISBN 978-3-16-148410-0 and 978-0-306-40615-7",
    "Prices: 12.99 14.99 19.99 24.99 9.99",
    "SKU-2024-0601-XL-BLUE",
    "dear customer 您好 今日は مرحبا ١٢٣",
    "https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=42s",
])
def test_ordinary_text_is_not_sensitive(text):
    assert scan_text(text) == set()


@settings(max_examples=200)
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=200))
def test_scanning_never_fails(text):
    scan_text(text)
    scan_params({"url": "https://x.test/?" + text, text: text})


@given(st.lists(st.sampled_from(["the", "order", "shipped", "on", "total", "price", "item", "color", "size",
                                 "blue", "June", "2024", "12", "$19.99", "#4471", "qty", "3", "x"]),
                min_size=3, max_size=40))
def test_prose_with_small_numbers_is_not_sensitive(words):
    assert scan_text(" ".join(words)) == set()


@pytest.mark.parametrize("text", ["41 11 11 11 11 11 11 11", "411 111 111 111 111 1", "4 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1"])
def test_cards_in_pairs_threes_or_single_digits(text):
    assert "card_number" in scan_text(text)


@given(st.lists(st.integers(10, 99), min_size=10, max_size=40))
def test_a_list_of_small_numbers_is_not_a_card(numbers):
    assert "card_number" not in scan_text("Sizes in stock: " + " ".join(map(str, numbers)) + ".")


@pytest.mark.parametrize("text", [
    "0x" + CARD.encode().hex(), " ".join(f"{b:02x}" for b in CARD.encode()), ":".join(f"{b:02x}" for b in CARD.encode()),
    "".join(f"\\x{b:02x}" for b in CARD.encode()), "Q" + base64.b64encode(CARD.encode()).decode(),
])
def test_hex_dumps_and_shifted_base64(text):
    assert "card_number" in scan_text(text)


@pytest.mark.parametrize("params", [
    {"раssword": "x"},  # Cyrillic р and а
    {"u": "https://e.test/?\uff50\uff41\uff53\uff53\uff57\uff4f\uff52\uff44=x"},  # fullwidth key
    {"u": "https://e.test/?pass\u200bword=x"},  # zero-width space in the key
    {"u": "https://e.test/?Pass%2577ord=x"},  # encoded twice
    {"form": {"user_password": "x"}}, {"AWS_SECRET_ACCESS_KEY": "x"},
])
def test_credential_keys_however_spelled(params):
    assert "credential_field" in scan_params(params)


@pytest.mark.parametrize("text,found", [
    ("write to bob [at] example (dot) com", True), ("bob(at)example.com", True), ("bob＠example．com", True),
    ("b\u200bob@exa\u200dmple.com", True), ("meet at the station at noon", False), ("look at example.com", False),
])
def test_email_addresses_however_written(text, found):
    assert ("email_address" in scan_text(text)) is found


SCRIPTS = [str.maketrans({}), ARABIC_INDIC, EXTENDED_ARABIC, FULLWIDTH, BENGALI,
           str.maketrans("0123456789", "०१२३४५६७८९"), str.maketrans("0123456789", "๐๑๒๓๔๕๖๗๘๙")]
SEPARATORS = ["", " ", "\u00a0", ".", "-", "/", "_", "\u2009", "\u3000", "\u2013", "\uff0e", "\uff0f"]
INVISIBLE = ["", "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]


@settings(max_examples=300)
@given(st.lists(st.integers(0, 9), min_size=14, max_size=14), st.sampled_from("3456"),
       st.lists(st.sampled_from(SEPARATORS), min_size=3, max_size=3),
       st.lists(st.sampled_from(range(len(SCRIPTS))), min_size=16, max_size=16),
       st.lists(st.sampled_from(INVISIBLE), min_size=16, max_size=16),
       st.sampled_from(["", "pay with ", "card: ", "x"]))
def test_a_card_number_survives_any_mix_of_spellings(body, first, seps, scripts, invisible, prefix):
    digits = first + "".join(map(str, body))
    number = digits + next(d for d in "0123456789" if luhn_valid(digits + d))
    chars = [ch.translate(SCRIPTS[s]) + z for ch, s, z in zip(number, scripts, invisible)]
    groups = ["".join(chars[i:i + 4]) for i in range(0, 16, 4)]
    text = prefix + groups[0] + seps[0] + groups[1] + seps[1] + groups[2] + seps[2] + groups[3]
    assert "card_number" in scan_text(text)


@given(st.text(alphabet=st.characters(exclude_categories=("Nd", "No", "Nl", "Cs")), max_size=300))
def test_text_without_digits_holds_no_card_or_iban(text):
    assert not scan_text(text) & {"card_number", "iban"}


def test_basic_credentials_in_a_header():
    header = "Authorization: Basic " + base64.b64encode(b"alice:correct-horse").decode()
    assert "api_token" in scan_text(header)
    assert "api_token" not in scan_text("Basic training starts on Monday at the gym")
