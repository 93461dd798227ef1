// Settings: the audit log — recent decisions, answers and outcomes, filtered by thread, tool,
// verdict and kind of entry. Parameters arrive already redacted by the host.
import { UI } from "../generated/protocol.js";
import { clear, h, when } from "./dom.js";
import { t } from "./strings.js";

export class AuditSection {
  constructor(root, context) {
    this.context = context;
    const any = () => h("option", { value: "", text: t("settings.audit.any") });
    this.thread = h("select", { id: "audit-thread" }, any());
    this.tool = h("input", { id: "audit-tool", autocomplete: "off", list: "tool-names" });
    this.verdict = h("select", { id: "audit-verdict" }, any(), UI.verdicts.map((v) => h("option", { value: v, text: t(`verdict.${v}`) })));
    this.kind = h("select", { id: "audit-kind" }, any(), UI.auditKinds.map((k) => h("option", { value: k, text: t(`settings.audit.kind.${k}`) })));
    this.body = h("tbody");
    root.append(h("p", { class: "muted small", text: t("settings.audit.help") }),
      h("form", { class: "row", onsubmit: (event) => { event.preventDefault(); this.load(); } },
        h("label", {}, t("settings.audit.thread"), " ", this.thread),
        h("label", {}, t("settings.audit.tool"), " ", this.tool),
        h("label", {}, t("settings.audit.verdict"), " ", this.verdict),
        h("label", {}, t("settings.audit.kind"), " ", this.kind),
        h("button", { type: "submit", text: t("settings.audit.refresh") })),
      h("div", { class: "table-wrap" }, h("table", { class: "audit" },
        h("thead", {}, h("tr", {}, ["settings.audit.when", "settings.audit.what", "settings.audit.where", "settings.audit.result",
          "settings.audit.params"].map((k) => h("th", { scope: "col", text: t(k) })))), this.body)));
    this.loaded = false;
  }

  async load() {
    const op = { type: "audit.query", limit: 100 };
    if (this.thread.value) op.threadId = this.thread.value;
    if (this.tool.value.trim()) op.tool = this.tool.value.trim();
    if (this.verdict.value) op.verdict = this.verdict.value;
    if (this.kind.value) op.kind = this.kind.value;
    const reply = await this.context.client.send(op);
    clear(this.body);
    if (reply.type !== "audit.rows") {
      this.body.append(h("tr", {}, h("td", { colspan: 5, class: "bad", text: t("settings.refused", { message: reply.message }) })));
      return;
    }
    const rows = [...(reply.rows || [])].reverse(); // newest first on screen
    if (!rows.length) this.body.append(h("tr", {}, h("td", { colspan: 5, class: "muted", text: t("settings.audit.empty") })));
    for (const row of rows) {
      const result = [row.verdict && `${row.verdict} (${row.code})`, row.approvalDecision, row.toolOutcome, row.detail]
        .filter(Boolean).join(" · ");
      this.body.append(h("tr", { class: `kind-${row.kind}` },
        h("td", { class: "small", text: when(row.at) }),
        h("td", {}, h("code", { text: row.tool || row.kind }), h("div", { class: "muted small", text: t(`settings.audit.kind.${row.kind}`) })),
        h("td", { class: "small", text: row.targetOrigin || "" }),
        h("td", { class: "small" }, h("span", { class: row.verdict ? `verdict verdict-${row.verdict}` : "", text: result }),
          row.rule ? h("div", { class: "muted", text: row.rule }) : null),
        h("td", {}, row.paramsRedacted ? h("code", { class: "small", text: JSON.stringify(row.paramsRedacted) }) : null)));
    }
  }

  render() {
    const chosen = this.thread.value;
    clear(this.thread).append(h("option", { value: "", text: t("settings.audit.any") }));
    for (const meta of this.context.threads) this.thread.append(h("option", { value: meta.id, text: meta.title || t("threads.untitled") }));
    this.thread.value = chosen;
    if (!this.loaded) {
      this.loaded = true;
      this.load();
    }
  }
}
