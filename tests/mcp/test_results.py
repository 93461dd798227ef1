"""`summarise`: what of a server's answer the model reads and what only the user sees."""

from __future__ import annotations

import base64

from host.mcp import results
from host.mcp.results import summarise

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"0" * 40).decode()


def test_text_blobs_are_decoded_and_binary_ones_named():
    text = base64.b64encode("héllo".encode()).decode()
    answer = {"content": [
        {"type": "resource", "resource": {"uri": "r://a", "mimeType": "text/plain", "blob": text}},
        {"type": "resource", "resource": {"uri": "r://b", "mimeType": "application/zip", "blob": text}}]}
    out = summarise(answer).text
    assert "[resource r://a, text/plain]\nhéllo" in out and "[resource r://b, application/zip, 6 bytes, not shown]" in out


def test_a_broken_image_is_not_shown_and_user_only_text_stays_off_the_model():
    answer = {"content": [
        {"type": "image", "mimeType": "image/png", "data": "not base64!"},
        {"type": "image", "mimeType": "image/svg+xml", "data": PNG},
        {"type": "text", "text": "for you", "annotations": {"audience": ["user"]}},
        {"type": "text", "text": "for the model", "annotations": {"audience": ["assistant"]}}]}
    result = summarise(answer)
    assert result.images == [] and result.for_user == "for you"
    assert "for you" not in result.text and "for the model" in result.text and result.text.count("not shown") == 2


def test_the_lowest_priority_parts_are_left_out_first(monkeypatch):
    monkeypatch.setattr(results, "MAX_TEXT_CHARS", 30)
    answer = {"content": [
        {"type": "text", "text": "a" * 12, "annotations": {"priority": 0.9}},
        {"type": "text", "text": "b" * 12, "annotations": {"priority": 0.1}},
        {"type": "text", "text": "c" * 12}]}
    result = summarise(answer)
    assert result.text.startswith("a" * 12 + "\n" + "c" * 12) and "b" not in result.text.split("\n")[1]
    assert "[1 lower-priority part(s) left out to fit]" in result.text


def test_images_are_bounded_in_number_and_size():
    image = {"type": "image", "mimeType": "image/png", "data": PNG}
    assert len(summarise({"content": [image] * 6}).images) == results.MAX_IMAGES
    only_user = summarise({"content": [{**image, "annotations": {"audience": ["user"]}}]})
    assert only_user.images and "shown to them" in only_user.text


def test_audio_is_played_to_the_user_named_for_the_model_and_never_kept_as_an_image():
    wav = base64.b64encode(b"RIFF" + b"0" * 60).decode()
    result = summarise({"content": [{"type": "audio", "mimeType": "audio/wav", "data": wav}]})
    assert result.text == "[audio audio/wav, 64 bytes, played to the user]"
    assert result.images == [] and result.audio == [{"mimeType": "audio/wav", "data": wav}]
    # A type no player here is sure to take, or data that is not base64: named, not played.
    odd = summarise({"content": [{"type": "audio", "mimeType": "audio/x-odd", "data": wav},
                                 {"type": "audio", "mimeType": "audio/wav", "data": "not base64!"}]})
    assert odd.audio == [] and odd.text.count("not shown]") == 2
