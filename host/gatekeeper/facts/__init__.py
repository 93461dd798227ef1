"""Facts: the detectors that turn a call (its parameters and the target facts the host holds)
into findings the policy in `host.gatekeeper.decision` judges. Nothing here decides or stores.

  payload            secrets and personal data a call carries (the `sensitive_payload` findings)
  values             decisive values and names in text (addresses, IBANs, long numbers), their keys
  account_numbers    card numbers (Luhn, issuer ranges) and IBANs (mod-97), however written
  labelled_secrets   random values beside a label that names a secret (`client_secret: ...`)
  encoded            what base64 and hex tokens decode to
  url_parts          URLs in a text by part: userinfo password, query and fragment keys and values
  normalize          one text normaliser (`fold`, `plain`, `compact`, `digits`, `skeleton`)
  credential_target  whether the element a call types into is a credential field
  field_values       what the fields a call types into will hold afterwards
  rule_subject       what rule `args` conditions match: parameters, with element facts in place
"""
