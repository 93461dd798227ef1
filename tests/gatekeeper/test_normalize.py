"""The detection normaliser: every spelling of the same digits, separators and letters reduces to
one form, and ordinary text keeps its meaning."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from host.gatekeeper.facts.normalize import compact, digits, fold, percent_decode, strip_invisible

ARABIC_INDIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")
DEVANAGARI = str.maketrans("0123456789", "०१२३४५६७८९")
FULLWIDTH = str.maketrans("0123456789", "０１２３４５６７８９")


def test_every_scripts_digits_become_ascii():
    for table in (ARABIC_INDIC, DEVANAGARI, FULLWIDTH):
        assert digits("4111 1111 1111 1111".translate(table)) == "4111111111111111"


def test_separators_of_any_kind_are_dropped_by_compact():
    for sep in (" ", "\u00a0", ".", "-", "/", "_", "\u2009", "\u3000", "\u2013", "\u2212", "\uff0f"):
        assert compact(sep.join(["4111"] * 4)) == "4111" * 4


def test_fold_handles_case_fullwidth_signs_and_percent_encoding():
    assert fold("Bob＠Example.COM") == "bob@example.com"
    assert fold("bob%40example.com") == "bob@example.com"
    assert fold("bob%2540example.com") == "bob@example.com"  # encoded twice
    assert fold("STRASSE") == fold("straße")


def test_zero_width_characters_do_not_split_a_token():
    assert strip_invisible("41\u200b11\u200d11\ufeff") == "411111"
    assert digits("4111\u200b1111\u200c1111\u20601111") == "4111111111111111"


def test_percent_decoding_is_bounded_and_tolerates_bad_escapes():
    assert percent_decode("100% sure") == "100% sure"
    assert percent_decode("%ff") == "\ufffd"
    deep = "%" + "25" * 50 + "40"
    assert percent_decode(deep).startswith("%")  # stops after a few rounds, no error


def test_ordinary_prose_keeps_its_words():
    assert fold("Hello World") == "hello world"
    assert compact("Order No. 2024-06") == "orderno202406"


@given(st.text(max_size=60))
def test_forms_are_stable(text):
    assert fold(fold(text)) == fold(text) or "%" in text
    assert digits(text) == digits(text).strip()
    assert set(digits(text)) <= set("0123456789")
    assert compact(text) == compact(compact(text)) or "%" in text


def test_skeleton_reads_lookalike_letters_as_latin():
    from host.gatekeeper.facts.normalize import skeleton

    assert skeleton("раss_word") == "password"  # Cyrillic р and а
    assert skeleton("ΑΡΙ-Key") == "apikey"  # Greek capitals fold to lookalikes too
    assert skeleton("Straße") == "strasse"
