// Settings: "test a call" — the gatekeeper's decision for a tool on a URL, with every step it
// took (the same decision code `tabwarden policy explain` uses). Nothing runs, nothing is logged.
import { clear, h } from "./dom.js";
import { t } from "./strings.js";
import { threadLabel } from "./thread-list.js";

export class ExplainSection {
  constructor(root, context) {
    this.context = context;
    this.tool = h("select", { id: "explain-tool" });
    this.url = h("input", { id: "explain-url", type: "text", placeholder: "https://shop.example/cart", autocomplete: "off" });
    this.params = h("textarea", { id: "explain-params", rows: 2, placeholder: "{\"text\": \"…\"}" });
    this.thread = h("select", { id: "explain-thread" });
    this.result = h("div", { class: "explain-result", "aria-live": "polite" });
    root.append(h("p", { class: "muted small", text: t("settings.explain.help") }),
      h("form", { class: "fields explain-form", onsubmit: (event) => this.run(event) },
        h("label", { for: "explain-tool" }, t("settings.explain.tool")), this.tool,
        h("label", { for: "explain-url" }, t("settings.explain.url")), this.url,
        h("label", { for: "explain-params" }, t("settings.explain.params")), this.params,
        h("label", { for: "explain-thread" }, t("settings.explain.thread")), this.thread,
        h("div", { class: "fields-actions" }, h("button", { type: "submit", class: "primary", text: t("settings.explain.run") }))),
      this.result);
  }

  async run(event) {
    event.preventDefault();
    let params = {};
    if (this.params.value.trim()) {
      try {
        params = JSON.parse(this.params.value);
      } catch {
        params = null;
      }
      if (!params || typeof params !== "object" || Array.isArray(params)) {
        this.show(h("p", { class: "bad", text: t("settings.explain.badParams") }));
        return;
      }
    }
    const reply = await this.context.client.send({ type: "policy.explain", tool: this.tool.value, url: this.url.value.trim(), params,
      ...(this.thread.value ? { threadId: this.thread.value } : {}) });
    if (reply.type !== "policy.explained") {
      this.show(h("p", { class: "bad", text: t("settings.refused", { message: reply.message }) }));
      return;
    }
    this.show(
      h("p", { class: `verdict-line verdict-${reply.verdict}` },
        h("strong", { text: t("settings.explain.verdict", { verdict: t(`verdict.${reply.verdict}`), code: reply.code, policy: t(`policy.${reply.policy}`) }) })),
      h("p", { text: reply.reason }),
      reply.rule ? h("p", { class: "small", text: t("settings.explain.rule", { rule: reply.rule }) }) : null,
      (reply.flags || []).length ? h("p", { class: "small", text: t("settings.explain.flags", { flags: reply.flags.join(", ") }) }) : null,
      (reply.findings || []).length ? h("p", { class: "small", text: t("settings.explain.findings", { findings: reply.findings.join(", ") }) }) : null,
      h("ol", { class: "trace small" }, (reply.trace || []).map((step) =>
        h("li", { class: `step-${step.outcome}` }, h("code", { text: step.step }), ` ${step.outcome}: ${step.detail}`))));
  }

  show(...nodes) {
    clear(this.result).append(...nodes.filter(Boolean));
  }

  render(state) {
    if (!this.tool.options.length) {
      for (const tool of state.tools || []) {
        this.tool.append(h("option", { value: tool.name, text: `${tool.label} (${tool.name}, ${tool.effects})` }));
      }
      this.tool.value = "click";
    }
    const chosen = this.thread.value;
    clear(this.thread).append(h("option", { value: "", text: t("settings.explain.anyThread") }));
    for (const meta of this.context.threads) this.thread.append(h("option", { value: meta.id, text: threadLabel(meta) }));
    this.thread.value = chosen;
  }
}
