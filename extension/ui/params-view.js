// Complete tool parameters, shown in full so the user sees what is clicked, typed and where it
// goes. Secrets are masked (their presence and length stay visible, and the user may reveal
// them): values under credential-like keys, and typed text when the host's facts say the element
// is a password field (`passwordTarget` of the request, never the rendered element line: that
// line holds the page's own text, which may say anything). Invisible and reordering characters
// are shown as markers (visible.js), in keys and values alike.
import { h } from "./dom.js";
import { t } from "./strings.js";
import { setVisibleText, visibleNodes } from "./visible.js";

// Compared after lowercasing and dropping "_", "-" and spaces (as the host's payload check does).
const CREDENTIAL_KEYS = new Set([
  "password", "passwd", "pwd", "passphrase", "secret", "clientsecret", "secretkey", "token", "accesstoken",
  "refreshtoken", "idtoken", "authtoken", "sessiontoken", "bearertoken", "apikey", "apitoken", "privatekey",
  "otp", "pin", "cvv", "cvc", "ssn",
]);
const TYPED_KEYS = new Set(["text", "value", "values", "keys", "key"]);
const MAX_DEPTH = 8;

export function isSecretKey(key) {
  return CREDENTIAL_KEYS.has(String(key).toLowerCase().replace(/[_\-\s]/g, ""));
}

// A copy of `params` with every secret replaced by a mask naming its length (for one-line summaries).
export function maskParams(value, passwordTarget = false, depth = 0) {
  if (depth > MAX_DEPTH || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((item) => maskParams(item, passwordTarget, depth + 1));
  const out = {};
  for (const [key, item] of Object.entries(value)) {
    const hidden = isSecretKey(key) || (passwordTarget && TYPED_KEYS.has(key.toLowerCase()));
    out[key] = hidden ? `•••••••• (${t("approval.secret", { count: (typeof item === "string" ? item : JSON.stringify(item)).length })})`
      : maskParams(item, passwordTarget, depth + 1);
  }
  return out;
}

// A host-made summary (JSON, maybe cut short) with its secrets masked when it can be read.
export function maskSummary(summary, passwordTarget = false) {
  try {
    return JSON.stringify(maskParams(JSON.parse(summary), passwordTarget));
  } catch {
    return passwordTarget ? "••••••••" : summary;
  }
}

export function renderParams(params, { passwordTarget = false } = {}) {
  const entries = params && typeof params === "object" ? Object.entries(params) : [];
  if (!entries.length) return h("p", { class: "muted", text: t("approval.noParams") });
  return table(entries, passwordTarget, 0);
}

function table(entries, passwordTarget, depth) {
  return h("dl", { class: "params" }, entries.map(([key, value]) => [
    h("dt", {}, visibleNodes(key)),
    h("dd", {}, isSecretKey(key) || (passwordTarget && TYPED_KEYS.has(key.toLowerCase()))
      ? secret(value) : valueView(value, passwordTarget, depth + 1)),
  ]));
}

function valueView(value, passwordTarget, depth) {
  if (value === null || value === undefined) return h("code", { text: String(value) });
  if (typeof value === "string") return h("span", { class: "param-text" }, visibleNodes(value));
  if (typeof value !== "object") return h("code", { text: JSON.stringify(value) });
  if (depth > MAX_DEPTH) return h("code", {}, visibleNodes(JSON.stringify(value)));
  if (Array.isArray(value)) {
    if (!value.length) return h("code", { text: "[]" });
    return h("ol", { class: "param-list", start: "0" },
      value.map((item) => h("li", {}, valueView(item, passwordTarget, depth + 1))));
  }
  const entries = Object.entries(value);
  return entries.length ? table(entries, passwordTarget, depth) : h("code", { text: "{}" });
}

function secret(value) {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  const shown = h("span", { class: "secret", text: `•••••••• (${t("approval.secret", { count: text.length })})` });
  const toggle = h("button", { type: "button", class: "link", text: t("approval.reveal") });
  let revealed = false;
  toggle.addEventListener("click", () => {
    revealed = !revealed;
    setVisibleText(shown, revealed ? text : `•••••••• (${t("approval.secret", { count: text.length })})`);
    toggle.textContent = t(revealed ? "approval.hide" : "approval.reveal");
  });
  return h("span", { class: "secret-wrap" }, shown, " ", toggle);
}
