// Why an approval card asks, in words a person knows: built from the request's decision code,
// flags, policy and destinations (never from the host's prose, which stays under Details).
import { UI } from "../generated/protocol.js";
import { destinationSite, siteOf } from "./action-words.js";
import { has, t } from "./strings.js";

const FLAG_ORDER = UI.approvalFlagOrder;
const CLICKS = new Set(["click", "click_trusted", "click_xy"]);

// The lines, most important first, each once.
export function whyLines(request) {
  const site = siteOf(request.targetOrigin) || t("why.thisSite");
  const flags = new Set(request.flags || []);
  const lines = [];
  const add = (key, vars = {}) => {
    const text = t(key, { site, ...vars });
    if (!lines.includes(text)) lines.push(text);
  };
  const code = request.code || "";
  // The code first when it says something the flags do not.
  if (code === "untrusted_value" || flags.has("untrusted_value")) {
    // Each value by name, with where it was seen: the question is whether the user meant it.
    const values = request.untrustedValues || [];
    for (const v of values.slice(0, 3)) {
      add(v.seenAt ? "why.untrustedSeen" : "why.untrustedUnseen", { what: v.what, value: v.value, origin: v.seenAt || "" });
    }
    if (!values.length) add("why.untrusted_value");
  }
  // What the action commits, in plain words, before anything else about it.
  if (request.effectWords && code === "commit") {
    const name = request.targetName || "";
    // A request that handed its choices to what the agent read consented to nothing in it.
    const chosen = request.effectChosenBy ? ".chosen" : "";
    add(`why.commit${chosen}${name ? "" : ".unnamed"}`, { what: request.effectWords, name, words: request.effectChosenBy || "" });
  }
  const leads = (request.destinations || []).map(destinationSite).filter(Boolean);
  if (leads.length) add(isClick(request.tool) ? "why.leadsClick" : "why.leads", { to: [...new Set(leads)].join(", ") });
  for (const flag of FLAG_ORDER) {
    if (flags.has(flag) && flag !== "untrusted_value" && !(flag === "commit" && request.effectWords)) add(`flag.${flag}`);
  }
  if (code === "guarded_origin") add("flag.guarded_origin");
  else if (code === "sensitive_payload") add("flag.sensitive_payload");
  else if (code === "policy_default" || code === "read_ask") {
    const policy = request.policy && has(`policy.${request.policy}`) ? t(`policy.${request.policy}`) : "";
    add(policy ? `why.${code}` : `why.${code}.unnamed`, { policy });
  } else if (code && code !== "untrusted_value" && has(`why.${code}`)) add(`why.${code}`);
  return lines;
}

function isClick(tool) {
  return CLICKS.has(tool);
}
