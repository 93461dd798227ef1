// What a tool call does, in one plain sentence: "Type “Grace Hopper” into “Full name” on
// shop.example?" on an approval card, "Typed “Grace Hopper” into “Full name”" on a done tool
// card. Built only from structured facts: the tool, its parameters, and the element and site the
// host resolved (`targetName`, `pageOrigin`/`targetOrigin`, `passwordTarget`); never from the page's element
// line or the host's prose. Values that may come from a page keep their invisible characters
// visible (visible.js); secrets are named, never shown.
import { h } from "./dom.js";
import { isSecretKey } from "./params-view.js";
import { has, t, template } from "./strings.js";
import { visibleNodes } from "./visible.js";

const MAX_VALUE = 80;
// Tools that share a sentence with another one.
const SAME_AS = { type_trusted: "type", click_trusted: "click", click_xy: "click", read_page_deep: "read_page" };
// Where the sentence's value comes from, per tool.
const VALUE_OF = {
  type: (p) => p.text,
  select_option: (p) => (Array.isArray(p.values) ? p.values.join(", ") : p.values),
  press_key: (p) => p.key,
  memory_write: (p) => p.key,
  load_skill: (p) => (p.resource ? `${p.name} (${p.resource})` : p.name),
  find_in_page: (p) => p.query ?? p.text,
};
const URL_TOOLS = new Set(["navigate", "tab_open", "fetch_url", "download"]);

// The site a person recognises: the host (and port) of an origin, or of a URL.
export function siteOf(originOrUrl) {
  if (!originOrUrl) return "";
  try {
    const url = new URL(originOrUrl);
    return url.host || url.protocol.replace(/:$/, "");
  } catch {
    return String(originOrUrl);
  }
}

// A destination as the host reports it (`METHOD URL`, or a URL): its site.
export function destinationSite(destination) {
  const parts = String(destination).trim().split(/\s+/);
  return siteOf(parts[parts.length - 1]);
}

// The facts of one call that its sentence needs. `call` holds tool, label, params and, when the
// host sent them, targetName, targetOrigin and passwordTarget; `fallbackField` lets a tool card
// name the element from the model's own description when the host named none.
export function actionFacts(call, { fallbackField = false } = {}) {
  const tool = SAME_AS[call.tool] || call.tool || "";
  const params = call.params && typeof call.params === "object" ? call.params : {};
  const raw = VALUE_OF[tool] ? VALUE_OF[tool](params) : URL_TOOLS.has(tool) ? params.url : undefined;
  const secret = (call.passwordTarget === true && tool === "type") || secretIn(params, tool);
  const field = call.targetName || (fallbackField && typeof params.element === "string" ? params.element : "");
  // The page it acts on: a click judged where its link leads still happens here.
  const site = URL_TOOLS.has(tool) && params.url ? siteOf(params.url) : siteOf(call.pageOrigin || call.targetOrigin);
  return {
    tool, label: call.label || call.tool || "", field, site, secret,
    value: raw === undefined || raw === null ? "" : String(raw),
    url: URL_TOOLS.has(tool) ? String(params.url || "") : "",
    count: Array.isArray(params.actions) ? params.actions.length : 0,
  };
}

// The facts of each action of a multi-action call (`params.actions`: batch_actions, or any tool
// that takes a list of actions), in order, each named by the host's facts for its element
// (`actionTargets`); null for a call of one action. Without those facts an action's element is
// unnamed, and its typed text is masked when the call types into a password field anywhere.
export function stepFacts(request) {
  const actions = request.params && Array.isArray(request.params.actions) ? request.params.actions : null;
  const named = (action) => action && typeof action === "object" && typeof (action.action ?? action.tool) === "string";
  if (!actions || !actions.length || !actions.every(named)) return null; // no list of actions we can read
  const targets = Array.isArray(request.actionTargets) && request.actionTargets.length === actions.length
    ? request.actionTargets : null;
  return actions.map((action, i) => {
    const tool = action.action ?? action.tool;
    const target = targets ? targets[i] || {} : {};
    return actionFacts({
      tool, label: tool, params: action, targetName: target.name || "",
      passwordTarget: targets ? target.passwordTarget === true : request.passwordTarget === true,
    });
  });
}

function secretIn(params, tool) {
  if (tool === "type" || tool === "select_option") return Object.keys(params).some((k) => isSecretKey(k));
  return false;
}

// The sentence as nodes. `mood`: "ask" (a question, with the site), "done" (past tense) or
// "todo" (what was to be done: running, declined, failed).
export function actionSentence(facts, mood) {
  const base = has(`act.${mood}.${facts.tool}`) ? facts.tool : "generic";
  const shape = facts.field && has(`act.${mood}.${base}.field`) ? `${base}.field` : base;
  const key = !facts.site && has(`act.${mood}.${shape}.nosite`) ? `act.${mood}.${shape}.nosite` : `act.${mood}.${shape}`;
  return fill(template(key), {
    value: valueNodes(facts),
    field: quotedNodes(facts.field),
    site: facts.site ? h("span", { class: "site" }, visibleNodes(facts.site)) : "",
    url: h("span", { class: "url" }, visibleNodes(cut(facts.url || facts.site))),
    label: facts.label,
    count: String(facts.count),
  });
}

function valueNodes(facts) {
  if (facts.secret) return h("span", { class: "secret", text: t("act.secret", { count: facts.value.length }) });
  return quotedNodes(cut(facts.value));
}

export function quotedNodes(text) {
  if (!text) return "";
  return h("span", { class: "quoted" }, "“", h("span", { class: "param-text" }, visibleNodes(text)), "”");
}

export function cut(text, max = MAX_VALUE) {
  const s = String(text || "");
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

// A template ("Type {value} into {field}") with its placeholders replaced by nodes or text.
export function fill(template, vars) {
  const out = [];
  let last = 0;
  for (const found of template.matchAll(/\{(\w+)\}/g)) {
    if (found.index > last) out.push(template.slice(last, found.index));
    const value = vars[found[1]];
    if (value !== undefined && value !== null && value !== "") out.push(value);
    last = found.index + found[0].length;
  }
  if (last < template.length) out.push(template.slice(last));
  return out;
}
