// Settings: the audit log — recent decisions, answers and outcomes, filtered by thread, tool,
// verdict and kind of entry. The rows of one call (its decision, your answer, how it ended) are
// shown together as one line a person can read, which opens to the rows as recorded. "Verify
// chain" has the host recompute the log's hash chain; "Export" saves the rows shown as JSON Lines.
// Parameters arrive already redacted by the host.
import { UI } from "../generated/protocol.js";
import { clear, h, when } from "./dom.js";
import { groupCalls, summary } from "./audit-summary.js";
import { t } from "./strings.js";

export class AuditSection {
  constructor(root, context) {
    this.context = context;
    this.rows = [];
    const any = () => h("option", { value: "", text: t("settings.audit.any") });
    this.thread = h("select", { id: "audit-thread" }, any());
    this.tool = h("input", { id: "audit-tool", autocomplete: "off", list: "tool-names" });
    this.verdict = h("select", { id: "audit-verdict" }, any(), UI.verdicts.map((v) => h("option", { value: v, text: t(`verdict.${v}`) })));
    this.kind = h("select", { id: "audit-kind" }, any(), UI.auditKinds.map((k) => h("option", { value: k, text: t(`settings.audit.kind.${k}`) })));
    this.list = h("ol", { class: "audit-calls", "aria-live": "polite" });
    this.status = h("p", { class: "status small", role: "status" });
    root.append(h("p", { class: "muted small", text: t("settings.audit.help") }),
      h("form", { class: "row audit-filters", onsubmit: (event) => { event.preventDefault(); this.load(); } },
        h("label", {}, t("settings.audit.thread"), " ", this.thread),
        h("label", {}, t("settings.audit.tool"), " ", this.tool),
        h("label", {}, t("settings.audit.verdict"), " ", this.verdict),
        h("label", {}, t("settings.audit.kind"), " ", this.kind),
        h("button", { type: "submit", text: t("settings.audit.refresh") })),
      h("div", { class: "row audit-actions" },
        h("button", { type: "button", id: "audit-verify", text: t("settings.audit.verify"), onclick: () => this.verify() }),
        h("button", { type: "button", id: "audit-export", text: t("settings.audit.export"), onclick: () => this.export() })),
      this.status, this.list);
    this.loaded = false;
  }

  async load() {
    const op = { type: "audit.query", limit: 100 };
    if (this.thread.value) op.threadId = this.thread.value;
    if (this.tool.value.trim()) op.tool = this.tool.value.trim();
    if (this.verdict.value) op.verdict = this.verdict.value;
    if (this.kind.value) op.kind = this.kind.value;
    const reply = await this.context.client.send(op);
    clear(this.list);
    if (reply.type !== "audit.rows") {
      this.rows = [];
      this.list.append(h("li", { class: "bad", text: t("settings.refused", { message: reply.message }) }));
      return;
    }
    this.rows = reply.rows || [];
    if (!this.rows.length) this.list.append(h("li", { class: "muted", text: t("settings.audit.empty") }));
    const labels = new Map(((this.context.state && this.context.state.tools) || []).map((tool) => [tool.name, tool.label]));
    for (const call of groupCalls(this.rows).reverse()) { // newest first on screen
      this.list.append(h("li", { class: "audit-call", dataset: { callId: call.key, verdict: call.verdict || "" } },
        h("details", {},
          h("summary", {}, h("span", { class: "small muted audit-when", text: when(call.rows[0].at) }), " ",
            h("span", { class: "audit-line", text: summary(call, labels) })),
          rawRows(call.rows))));
    }
  }

  async verify() {
    this.status.classList.remove("bad", "good");
    this.status.textContent = t("settings.audit.verifying");
    const reply = await this.context.client.send({ type: "audit.verify" });
    let text;
    if (reply.type !== "audit.verified") text = t("settings.refused", { message: reply.message });
    else if (reply.ok) text = t("settings.audit.intact", { rows: reply.rows, head: (reply.head || "").slice(0, 12) });
    else text = t("settings.audit.broken", { seq: reply.brokenSeq, problem: reply.problem, before: Math.max(0, reply.rows - 1) });
    this.status.textContent = text;
    this.status.classList.add(reply.type === "audit.verified" && reply.ok ? "good" : "bad");
  }

  // The rows shown (after the filters), oldest first as the chain holds them, one JSON per line.
  export() {
    const text = this.rows.map((row) => JSON.stringify(row)).join("\n") + (this.rows.length ? "\n" : "");
    const url = URL.createObjectURL(new Blob([text], { type: "application/x-ndjson" }));
    const stamp = new Date().toISOString().replace(/[:.]/g, "-").slice(0, 19);
    const link = h("a", { href: url, download: `tabwarden-audit-${stamp}.jsonl`, hidden: true });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
    this.status.classList.remove("bad", "good");
    this.status.textContent = t("settings.audit.exported", { count: this.rows.length });
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

// The rows of one call as recorded, for whoever wants the codes.
function rawRows(rows) {
  const label = (key) => ({ "data-label": t(key) });
  return h("div", { class: "table-wrap" }, h("table", { class: "audit stack" },
    h("thead", {}, h("tr", {}, ["settings.audit.when", "settings.audit.what", "settings.audit.where", "settings.audit.result",
      "settings.audit.params"].map((k) => h("th", { scope: "col", text: t(k) })))),
    h("tbody", {}, rows.map((row) => {
      const result = [row.verdict && `${row.verdict} (${row.code})`, row.approvalDecision, row.toolOutcome, row.detail]
        .filter(Boolean).join(" · ");
      return h("tr", { class: `kind-${row.kind}`, dataset: { seq: String(row.seq) } },
        h("td", { class: "small", text: when(row.at), ...label("settings.audit.when") }),
        h("td", label("settings.audit.what"), h("code", { text: row.tool || row.kind }),
          h("div", { class: "muted small", text: t(`settings.audit.kind.${row.kind}`) })),
        h("td", { class: "small", text: row.targetOrigin || "", ...label("settings.audit.where") }),
        h("td", { class: "small", ...label("settings.audit.result") },
          h("span", { class: row.verdict ? `verdict verdict-${row.verdict}` : "", text: result }),
          row.rule ? h("div", { class: "muted", text: row.rule }) : null),
        h("td", label("settings.audit.params"), row.paramsRedacted ? h("code", { class: "small", text: JSON.stringify(row.paramsRedacted) }) : null));
    }))));
}
