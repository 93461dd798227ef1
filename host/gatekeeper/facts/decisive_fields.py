"""Fields whose value decides where money goes or how much: an amount, a sort code, an account or
routing number, an IBAN or BIC, a payee's name, a wallet address. A value typed there is judged
whole by provenance whatever its shape, since "20-00-00", "55779911" or "9500" are too short or
too plain to be found as values in free text, and each of them redirects a payment.

The kind comes from what the host knows of the field: its autocomplete token
(`transaction-amount`), its name attribute, label, placeholder or accessible name, against a word
list in the eight languages the consequence model reads. Never from the model's words.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from host.gatekeeper.facts.commit_vocabulary import normalize

# kind -> words naming it (normalised: lower case, punctuation as spaces).
_KINDS: dict[str, tuple[str, ...]] = {
    "amount": ("amount", "transfer amount", "payment amount", "sum", "importe", "cantidad", "monto", "montant",
               "somme", "betrag", "summe", "valor", "quantia", "importo", "金额", "金額", "振込金額"),
    "sort code": ("sort code", "sortcode", "bank code", "bankleitzahl", "blz", "código del banco", "code banque",
                  "agência", "agencia", "codice abi", "銀行コード", "支店コード"),
    "account number": ("account number", "account no", "acct", "account num", "número de cuenta", "numero de cuenta",
                       "numéro de compte", "kontonummer", "número da conta", "numero da conta", "numero di conto",
                       "账号", "账户", "收款账号", "口座番号"),
    "routing number": ("routing number", "aba", "routing", "transit number", "bsb"),
    "IBAN": ("iban",),
    "BIC": ("bic", "swift", "swift code", "bic swift"),
    "payee": ("payee", "payee name", "beneficiary", "beneficiary name", "recipient name", "account holder",
              "account name", "name on the account", "beneficiario", "titular", "bénéficiaire", "titulaire",
              "empfänger", "kontoinhaber", "favorecido", "beneficiário", "intestatario", "收款人", "受取人",
              "振込先", "受取人名"),
    "wallet address": ("wallet address", "wallet", "bitcoin address", "btc address", "ethereum address",
                       "eth address", "destination address", "crypto address", "recipient address", "钱包地址",
                       "ウォレットアドレス"),
}
_AUTOCOMPLETE = {"transaction-amount": "amount"}
# Fields that carry a payment's reference: a number there (an invoice's, a customer's) names the
# payment, it does not decide where the money goes.
_REFERENCE: tuple[str, ...] = (
    "reference", "payment reference", "memo", "purpose", "remittance", "invoice number", "customer number",
    "concepto", "referencia", "référence", "libellé", "motif", "verwendungszweck", "referenz", "rechnungsnummer",
    "kundennummer", "referência", "descrição", "causale", "riferimento", "附言", "备注", "用途", "備考", "振込依頼人",
)
_WORD = re.compile(r"[^\W_]+")


def _index() -> list[tuple[tuple[str, ...], str]]:
    out = []
    for kind, words in _KINDS.items():
        for word in words:
            out.append((tuple(normalize(word, 100).split(" ")), kind))
    return sorted(out, key=lambda item: -len(item[0]))  # the longest phrase first


_PHRASES = _index()
_REFERENCE_PHRASES = sorted(((tuple(normalize(w, 100).split(" ")), "reference") for w in _REFERENCE),
                            key=lambda item: -len(item[0]))


def reference_field(target: Mapping[str, Any] | None) -> bool:
    """Whether a one-field call types into a payment's reference (where long numbers are the
    invoice's or the customer's, not an account)."""
    facts = _field_facts(target)
    if facts is None:
        return False
    for key in ("field_name", "fieldName", "label", "placeholder", "name"):
        text = facts.get(key)
        if isinstance(text, str) and text and _phrase_in(_normal(text), _REFERENCE_PHRASES):
            return True
    return False


def _field_facts(target: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    if not isinstance(target, Mapping):
        return None
    hints = target.get("hints")
    return hints[0] if isinstance(hints, list) and len(hints) == 1 and isinstance(hints[0], Mapping) else target


def _normal(text: str) -> str:
    return normalize(text.replace("_", " ").replace("-", " "), 200)


def decisive_field(target: Mapping[str, Any] | None) -> str | None:
    """The kind of payment field (in words: "amount", "sort code", "payee"...) a one-field call
    types into, or None for any other field."""
    facts = _field_facts(target)
    if facts is None or target is None:
        return None
    token = str(facts.get("autocomplete") or target.get("autocomplete") or "").lower()
    for part in token.split():
        if part in _AUTOCOMPLETE:
            return _AUTOCOMPLETE[part]
    for key in ("field_name", "fieldName", "label", "placeholder", "name"):
        text = facts.get(key)
        if isinstance(text, str) and text:
            if _phrase_in(_normal(text), _REFERENCE_PHRASES):
                return None  # "Reference / invoice number" names the payment, not the money's way
            found = _phrase_in(_normal(text), _PHRASES)
            if found is not None:
                return found
    return None


def _phrase_in(text: str, phrases: list[tuple[tuple[str, ...], str]]) -> str | None:
    """The kind of the longest phrase of `phrases` that `text` holds as whole words (CJK phrases
    anywhere in it), or None."""
    words = text.split(" ")
    for phrase, kind in phrases:
        if any(ord(c) > 0x2E80 for c in phrase[0]):
            if phrase[0] in text:
                return kind
            continue
        size = len(phrase)
        for at in range(len(words) - size + 1):
            if tuple(words[at:at + size]) == phrase:
                return kind
    return None
