// Why an approval card asks, in words a person knows: built from the request's decision code,
// flags, policy and destinations (never from the host's prose, which stays under Details); and
// what "Allow for this task" grants, in the host's own terms (the tool, or its commit's class, at
// the request's target origin).
import { UI } from "../generated/protocol.js";
import { destinationSite, siteOf } from "./action-words.js";
import { has, t } from "./strings.js";

const FLAG_ORDER = UI.approvalFlagOrder;
const CLICKS = new Set(["click", "click_trusted", "click_xy"]);

// The lines, most important first, each once. `values: false` leaves out the values from content
// (a warning card lists them itself); destinations on another site are left out when the card
// says that the agent leaves the page's site for them (`otherSites`).
export function whyLines(request, { values = true } = {}) {
  const site = siteOf(request.targetOrigin) || t("why.thisSite");
  const flags = new Set(request.flags || []);
  const lines = [];
  const add = (key, vars = {}) => {
    const text = t(key, { site, ...vars });
    if (!lines.includes(text)) lines.push(text);
  };
  const code = request.code || "";
  // The code first when it says something the flags do not.
  if (values && (code === "untrusted_value" || flags.has("untrusted_value"))) {
    // Each value by name, with where it was seen: the question is whether the user meant it.
    const found = request.untrustedValues || [];
    for (const v of found.slice(0, 3)) {
      add(v.seenAt ? "why.untrustedSeen" : "why.untrustedUnseen", { what: v.what, value: v.value, origin: v.seenAt || "" });
    }
    if (!found.length) add("why.untrusted_value");
  }
  // What the action commits, in plain words, before anything else about it.
  if (request.effectWords && code === "commit") {
    const name = request.targetName || "";
    // A request that handed its choices to what the agent read consented to nothing in it.
    const chosen = request.effectChosenBy ? ".chosen" : "";
    add(`why.commit${chosen}${name ? "" : ".unnamed"}`, { what: request.effectWords, name, words: request.effectChosenBy || "" });
  }
  const said = leavingHosts(request);
  const leads = (request.destinations || []).map(destinationSite).filter((to) => to && !said.has(to));
  if (leads.length) add(isClick(request.tool) ? "why.leadsClick" : "why.leads", { to: [...new Set(leads)].join(", ") });
  for (const flag of FLAG_ORDER) {
    if (flags.has(flag) && flag !== "untrusted_value" && !(flag === "commit" && request.effectWords)) add(`flag.${flag}`);
  }
  if (code === "guarded_origin") add("flag.guarded_origin");
  else if (code === "sensitive_payload") add("flag.sensitive_payload");
  else if (code === "policy_default" || code === "read_ask") {
    const policy = request.policy && has(`policy.${request.policy}`) ? t(`policy.${request.policy}`) : "";
    add(policy ? `why.${code}` : `why.${code}.unnamed`, { policy });
  } else if (code && code !== "untrusted_value" && code !== "commit" && has(`why.${code}`)) add(`why.${code}`);
  return lines;
}

// The hosts the card's "leaves … for …" line names.
function leavingHosts(request) {
  return new Set(request.pageSite ? (request.otherSites || []).map((other) => siteOf(other.url)) : []);
}

// What "Allow for this task" grants, as the host records it: the request's tool at its target
// origin, and for a call that commits something (`effect`) that commit's class there too, which
// the host also reads as covering any other form sent there (a commit it cannot name further).
export function grantWords(request) {
  const tool = request.tool || "";
  const site = siteOf(request.targetOrigin);
  const named = has(`grant.${tool}`) && site ? `grant.${tool}` : site ? "grant.generic" : "grant.generic.nosite";
  const what = t(named, { site, label: request.label || tool });
  const effect = request.effect && request.effect !== "step" ? request.effect : "";
  if (!effect) return what;
  const effectWords = has(`grant.effect.${effect}`) ? t(`grant.effect.${effect}`) : request.effectWords || effect;
  const key = !site ? "grant.withEffect.nosite" : effect === "submit" ? "grant.withSubmit" : "grant.withEffect";
  return t(key, { what, effect: effectWords });
}

function isClick(tool) {
  return CLICKS.has(tool);
}
