import pytest

from host.gatekeeper.facts.payload import iban_valid, luhn_valid, scan_params
from host.gatekeeper.redact import redact


@pytest.mark.parametrize("params,expected", [
    # Card numbers as people write them.
    ({"text": "4111 1111 1111 1111"}, {"card_number"}),
    ({"text": "4111-1111-1111-1111"}, {"card_number"}),
    ({"text": "4111 1111 1111 1111 1"}, {"card_number"}),  # a trailing group must not hide the number
    ({"text": "pay 4111111111111111 now 1"}, {"card_number"}),
    ({"text": "cc4111111111111111"}, {"card_number"}),  # glued to letters
    ({"text": "378282246310005"}, {"card_number"}),  # Amex
    ({"text": "0000000000000"}, set()),  # Luhn-valid, but no payment card starts with 0
    ({"n": 4111111111111111}, {"card_number"}),  # numbers count too
    ({"text": "call 13812345678"}, set()),  # an 11-digit phone number
    ({"text": "4111 1111 1111 1112"}, set()),  # Luhn-invalid
    # Credential keys: the whole key, any case, any depth.
    ({"Password": "x"}, {"credential_field"}),
    ({"form": {"fields": [{"api-key": "x"}]}}, {"credential_field"}),
    ({"apiKey": 1}, {"credential_field"}),
    ({"text": "password: hunter2"}, set()),  # a value, not a key
    ({"passwordHint": "x"}, set()),
    # E-mail.
    ({"text": "bob@example.com"}, {"email_address"}),
    ({"text": "x@y"}, set()),
    # IBAN, keys, tokens.
    ({"text": "GB82 WEST 1234 5698 7654 32"}, {"iban"}),
    ({"text": "DE89370400440532013000"}, {"iban"}),
    ({"text": "GB82 WEST 1234 5698 7654 33"}, set()),  # mod-97 fails
    ({"text": "-----BEGIN RSA PRIVATE KEY-----\nMIIE"}, {"private_key"}),
    ({"text": "-----BEGIN PGP PRIVATE KEY BLOCK-----"}, {"private_key"}),
    ({"text": "-----BEGIN PUBLIC KEY-----"}, set()),
    ({"t": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.sig_nature-x"}, {"jwt"}),
    ({"t": "AKIAIOSFODNN7EXAMPLE"}, {"api_token"}),
    ({"t": "token ghp_" + "x1" * 18}, {"api_token"}),
    ({"t": "xoxb-1234567890-abcdefghij"}, {"api_token"}),
    ({"t": "sk_live_" + "a1" * 10}, {"api_token"}),
    ({"t": "sk-proj-" + "Ab3" * 10}, {"api_token"}),
    ({"t": "AIza" + "B" * 35}, {"api_token"}),
    ({"u": "https://evil.test/?k=AKIAIOSFODNN7EXAMPLE"}, {"api_token"}),
    ({"h": "Authorization: Bearer abcdefghijklmnopqrstuvwxyz012"}, {"api_token"}),
    ({"u": "https://x.com/task-management-dashboard-settings"}, set()),
    ({"text": "hello world, find me cheap flights to paris"}, set()),
])
def test_scan(params, expected):
    assert set(scan_params(params)) == expected


def test_checksums():
    assert luhn_valid("4111111111111111") and not luhn_valid("4111111111111112")
    assert iban_valid("GB82WEST12345698765432") and not iban_valid("GB00WEST12345698765432")


def test_deeply_nested_params_do_not_crash():
    params: dict = {}
    node = params
    for _ in range(200):
        node["a"] = {}
        node = node["a"]
    node["password"] = "x"
    scan_params(params)  # bounded recursion: no RecursionError


def test_redact_masks_secrets_but_keeps_the_rest():
    params = {"ref": "s1", "password": "hunter2",
              "text": "card 4111 1111 1111 1111, token ghp_" + "x1" * 18 + ", mail bob@example.com",
              "nested": [{"apiKey": "k"}], "n": 4111111111111111, "ok": 42}
    out = redact(params)
    assert out["ref"] == "s1" and out["password"] == "[redacted]" and out["nested"] == [{"apiKey": "[redacted]"}]
    assert "4111" not in out["text"] and "ghp_" not in out["text"] and "bob@example.com" in out["text"]
    assert out["n"] == "[redacted:card_number]" and out["ok"] == 42


def test_redact_text_typed_into_a_password_field():
    assert redact({"ref": "s1", "text": "hunter2"}, {"input_type": "password"}) == {"ref": "s1", "text": "[redacted]"}
    batch = {"actions": [{"ref": "a", "text": "hunter2"}]}
    assert redact(batch, {"input_types": ["text", "password"]})["actions"][0]["text"] == "[redacted]"
    assert redact({"text": "hello"}, {"input_type": "email"}) == {"text": "hello"}
