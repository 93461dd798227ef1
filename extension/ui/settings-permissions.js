// Settings: the default permission policy, and the rules matrix (tool × site × verdict ×
// source) with add and delete; rules from policy files (the administrator's above all) are
// shown locked.
import { UI } from "../generated/protocol.js";
import "../generated/tools.js";
import { clear, h } from "./dom.js";
import { provenanceText } from "./path-text.js";
import { has, t } from "./strings.js";

// Policies and verdicts are offered in the order protocol/permissions.py declares them.
const { permissionPolicies: POLICIES, verdicts: VERDICTS } = UI;
const { categories: CATEGORIES } = globalThis.__tabwardenTools;

export class PolicySection {
  constructor(root, context) {
    this.context = context;
    this.status = h("p", { class: "status small", role: "status" });
    this.locked = h("p", { class: "muted small", hidden: true });
    this.inputs = POLICIES.map((policy) => h("input", { type: "radio", name: "default-policy", value: policy,
      onchange: () => context.change({ type: "policy.setDefault", policy }, this.status) }));
    root.append(h("p", { class: "muted small", text: t("settings.policy.help") }),
      h("div", { class: "choices", role: "radiogroup", "aria-labelledby": "policy-title" },
        POLICIES.map((policy, i) => h("label", { class: "choice" }, this.inputs[i],
          h("span", {}, h("strong", { text: t(`policy.${policy}`) }), " — ", t(`policy.${policy}.hint`))))),
      this.locked, this.status);
  }

  render(state) {
    for (const input of this.inputs) {
      input.checked = input.value === state.defaultPolicy;
      input.disabled = !!state.policyLockedBy;
    }
    this.locked.hidden = !state.policyLockedBy;
    clear(this.locked);
    if (state.policyLockedBy) this.locked.append(t("settings.policy.locked"), " ", provenanceText(state.policyLockedBy));
  }
}

export class RulesSection {
  constructor(root, context) {
    this.context = context;
    this.status = h("p", { class: "status small", role: "status" });
    this.body = h("tbody");
    this.toolNames = h("datalist", { id: "tool-names" });
    this.tool = h("input", { id: "rule-tool", list: "tool-names", required: true, autocomplete: "off", placeholder: "click, category:fill, mcp__*" });
    this.origin = h("input", { id: "rule-origin", required: true, autocomplete: "off", placeholder: "https://shop.example, *.example.com, *" });
    this.verdict = h("select", { id: "rule-verdict" }, VERDICTS.map((v) => h("option", { value: v, text: t(`verdict.${v}`) })));
    root.append(
      h("p", { class: "muted small", text: t("settings.rules.help") }),
      h("table", { class: "rules stack" },
        h("thead", {}, h("tr", {}, ["settings.rules.tool", "settings.rules.origin", "settings.rules.verdict", "settings.rules.source"]
          .map((key) => h("th", { scope: "col", text: t(key) })), h("th", {}))),
        this.body),
      h("form", { class: "row add-rule", onsubmit: (event) => this.add(event) },
        h("label", {}, t("settings.rules.tool"), " ", this.tool),
        h("label", {}, t("settings.rules.origin"), " ", this.origin),
        h("label", {}, t("settings.rules.verdict"), " ", this.verdict),
        h("button", { type: "submit", class: "primary", text: t("settings.rules.add") })),
      this.toolNames, this.status);
  }

  async add(event) {
    event.preventDefault();
    const reply = await this.context.change({ type: "rules.add", tool: this.tool.value.trim(), origin: this.origin.value.trim(),
      verdict: this.verdict.value }, this.status);
    if (reply.type === "command.ack") {
      this.tool.value = "";
      this.origin.value = "";
    }
  }

  // Fill the add form (from another section, e.g. an MCP server's "add a rule"); the user checks
  // it and adds the rule.
  prefill(tool, origin, verdict) {
    this.tool.value = tool;
    this.origin.value = origin;
    this.verdict.value = verdict;
    this.tool.scrollIntoView({ block: "center" });
    this.tool.focus();
  }

  render(state) {
    clear(this.toolNames);
    for (const tool of state.tools || []) this.toolNames.append(h("option", { value: tool.name, text: tool.label }));
    for (const category of CATEGORIES) this.toolNames.append(h("option", { value: `category:${category}` }));
    clear(this.body);
    const rules = state.rules || [];
    if (!rules.length) this.body.append(h("tr", {}, h("td", { colspan: 5, class: "muted", text: t("settings.rules.empty") })));
    for (const rule of rules) {
      // A rule Tabwarden seeded is stored like the user's (so it can be deleted) but is not theirs.
      const builtin = rule.provenance === "builtin";
      const source = builtin ? t("source.builtin") : has(`source.${rule.source}`) ? t(`source.${rule.source}`) : rule.source;
      const label = (key) => ({ "data-label": t(key) });
      this.body.append(h("tr", { dataset: { ruleId: rule.id, source: rule.source } },
        h("td", label("settings.rules.tool"), h("code", { text: rule.tool })),
        h("td", label("settings.rules.origin"), h("code", { text: rule.origin || t("settings.rules.noSite") })),
        h("td", label("settings.rules.verdict"), h("span", { class: `verdict verdict-${rule.verdict}`, text: t(`verdict.${rule.verdict}`) })),
        h("td", { class: "small", ...label("settings.rules.source") }, source, rule.provenance !== "store" && !builtin
          ? h("div", { class: "muted" }, t("settings.rules.from"), " ", provenanceText(rule.provenance)) : null),
        h("td", { class: "actions" }, rule.removable
          ? h("button", { type: "button", class: "danger", text: t("settings.rules.delete"),
            "aria-label": `${t("settings.rules.delete")} ${rule.tool} @ ${rule.origin}`,
            onclick: () => this.context.change({ type: "rules.remove", ruleId: rule.id }, this.status) })
          : h("span", { class: "muted small locked", text: t("settings.rules.locked", { provenance: rule.provenance.split(":")[0] }) }))));
    }
  }
}
