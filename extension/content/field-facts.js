// Tabwarden page executor, part 2b: what the host needs to know of a form field to judge what is
// typed into it. A credential field (a password input, an autocomplete token, name or label that
// names a password, PIN, card number or code) never has its value shown or sent; any other
// field's value goes to the host with the snapshot's refs (never into the snapshot beyond what
// `attributesOf` shows), so that text typed in pieces is judged as the whole the field will hold.
// The word lists are the host's (host/gatekeeper/facts/credential_target.py); a test keeps them equal.
(() => {
  const TW = globalThis.__tabwarden;
  if (TW.parts.has("field-facts")) return;
  TW.parts.add("field-facts");

  const CREDENTIAL_AUTOCOMPLETE = new Set([
    "current-password", "new-password", "one-time-code", "cc-number", "cc-csc", "cc-exp", "cc-exp-month",
    "cc-exp-year",
  ]);
  const CREDENTIAL_WORDS = new Set([
    "password", "passwort", "passwd", "pwd", "passcode", "passphrase", "pin", "cvv", "cvv2", "cvc", "cvc2",
    "csc", "otp", "totp", "2fa", "mfa", "ssn",
  ]);
  const CREDENTIAL_PHRASES = [
    "security code", "verification code", "one time code", "card number", "credit card", "debit card",
    "card verification", "secret key", "api key", "access token", "recovery code", "backup code",
  ];
  const CREDENTIAL_STEMS = ["password", "passwd", "passphrase", "passcode", "cardnumber", "ccnumber", "cvv", "cvc"];
  // The tail is what matters for text appended next; the host bounds it too.
  const MAX_VALUE = 1000;
  const MAX_ATTRIBUTE = 200;

  // NFKC leaves ASCII as it is, and most names are ASCII: the normalisation is asked only of the rest.
  const ASCII = /^[\x00-\x7f]*$/;

  const namesCredential = (text) => {
    if (!text) return false;
    const split = String(text).replace(/([a-z])([A-Z])/g, "$1 $2");
    const words = (ASCII.test(split) ? split : split.normalize("NFKC")).toLowerCase().match(/[a-z0-9]+/g) || [];
    if (words.some((word) => CREDENTIAL_WORDS.has(word))) return true;
    const joined = words.join(" ");
    if (CREDENTIAL_PHRASES.some((phrase) => joined.includes(phrase))) return true;
    const squeezed = words.join("");
    return CREDENTIAL_STEMS.some((stem) => squeezed.includes(stem));
  };

  const isField = (el) => el.localName === "input" || el.localName === "textarea" || TW.isEditableRoot(el);

  // True for a field whose value is a secret, judged on what the page says about it.
  TW.isCredentialField = (el) => TW.onceInWalk(el, "credential", () => credentialField(el));

  const credentialField = (el) => {
    if (TW.isPassword(el)) return true;
    if (!isField(el)) return false;
    const auto = (el.getAttribute("autocomplete") || "").toLowerCase().split(/\s+/);
    if (auto.some((token) => CREDENTIAL_AUTOCOMPLETE.has(token))) return true;
    for (const attr of ["name", "id", "aria-label", "placeholder"]) {
      if (namesCredential(el.getAttribute(attr))) return true;
    }
    return namesCredential(TW.nameOf(el, false));
  };

  const keys = new WeakMap();
  let nextKey = 0;
  // One key per element for the life of the document: the host follows a field's value across
  // snapshots, whose refs differ.
  const elementKey = (el) => {
    let key = keys.get(el);
    if (key === undefined) {
      nextKey += 1;
      key = `e${nextKey}`;
      keys.set(el, key);
    }
    return key;
  };

  const currentValue = (el) => {
    const value = el.localName === "input" || el.localName === "textarea" ? String(el.value || "") : String(el.textContent || "");
    return value.length > MAX_VALUE ? value.slice(value.length - MAX_VALUE) : value;
  };

  // The field facts added to a ref's hint: nothing for an element that is not a field.
  TW.fieldFactsOf = (el) => {
    if (!isField(el)) return null;
    const facts = { elementKey: elementKey(el) };
    const auto = el.getAttribute("autocomplete");
    if (auto) facts.autocomplete = auto.slice(0, MAX_ATTRIBUTE);
    const fieldName = el.getAttribute("name") || el.id;
    if (fieldName) facts.fieldName = fieldName.slice(0, MAX_ATTRIBUTE);
    if (TW.isCredentialField(el)) facts.credential = true;
    else if (el.localName !== "input" || TW.isTextInput(el)) facts.value = currentValue(el);
    return facts;
  };
})();
