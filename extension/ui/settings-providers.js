// Settings: model providers — the list (never the keys), add or edit, verify with a real
// request, choose the default (and with it the default model), remove one with its key.
import { clear, h } from "./dom.js";
import { t } from "./strings.js";

export class ProvidersSection {
  constructor(root, context) {
    this.context = context;
    this.status = h("p", { class: "status small", role: "status" });
    this.body = h("tbody");
    this.verified = new Map(); // provider name -> {text, cls}: kept when the table is redrawn
    this.asking = null; // the provider whose removal waits for a yes, drawn in its row
    this.state = null;
    this.fields = {
      name: h("input", { id: "provider-name", required: true, autocomplete: "off", pattern: "[A-Za-z0-9_.\\-]{1,64}" }),
      kind: h("select", { id: "provider-kind" }, h("option", { value: "openai", text: t("settings.providers.kind.openai") }),
        h("option", { value: "anthropic", text: t("settings.providers.kind.anthropic") })),
      baseUrl: h("input", { id: "provider-url", type: "url", required: true, placeholder: "https://api.openai.com/v1" }),
      model: h("input", { id: "provider-model", required: true, autocomplete: "off" }),
      apiKey: h("input", { id: "provider-key", type: "password", autocomplete: "off", placeholder: t("settings.providers.keyKeep") }),
      makeDefault: h("input", { id: "provider-default", type: "checkbox" }),
    };
    const f = this.fields;
    root.append(h("p", { class: "muted small", text: t("settings.providers.help") }),
      h("table", { class: "stack" }, h("thead", {}, h("tr", {}, ["settings.providers.name", "settings.providers.kind", "settings.providers.baseUrl",
        "settings.providers.model", "settings.providers.key"].map((k) => h("th", { scope: "col", text: t(k) })), h("th", {}))), this.body),
      h("form", { class: "grid", onsubmit: (event) => this.save(event) },
        h("label", {}, t("settings.providers.name"), f.name),
        h("label", {}, t("settings.providers.kind"), f.kind),
        h("label", {}, t("settings.providers.baseUrl"), f.baseUrl),
        h("label", {}, t("settings.providers.model"), f.model),
        h("label", {}, t("settings.providers.key"), f.apiKey),
        h("label", { class: "row" }, f.makeDefault, t("settings.providers.makeDefault")),
        h("div", {}, h("button", { type: "submit", class: "primary", text: t("settings.providers.save") }))),
      this.status);
  }

  async save(event) {
    event.preventDefault();
    const f = this.fields;
    const op = { type: "providers.save", name: f.name.value.trim(), kind: f.kind.value, baseUrl: f.baseUrl.value.trim(),
      model: f.model.value.trim(), makeDefault: f.makeDefault.checked };
    if (f.apiKey.value) op.apiKey = f.apiKey.value;
    const reply = await this.context.change(op, this.status);
    if (reply.type === "command.ack") f.apiKey.value = ""; // the key now lives with the host only
  }

  edit(provider) {
    const f = this.fields;
    f.name.value = provider.name;
    f.kind.value = provider.kind;
    f.baseUrl.value = provider.baseUrl;
    f.model.value = provider.model;
    f.apiKey.value = "";
    f.makeDefault.checked = !!provider.isDefault;
    f.model.focus();
  }

  async verify(provider) {
    this.show(provider.name, t("settings.providers.verifying"), "small");
    const reply = await this.context.client.send({ type: "providers.verify", name: provider.name });
    if (reply.type !== "providers.verified") this.show(provider.name, t("settings.refused", { message: reply.message }), "small bad");
    else if (reply.ok) this.show(provider.name, t("settings.providers.ok", { ms: reply.elapsedMs, message: reply.message }), "small good");
    else this.show(provider.name, t("settings.providers.failed", { kind: reply.errorKind || "?", message: reply.message }), "small bad");
  }

  // Removing takes two steps: Remove… asks in the row, and the answer that keeps comes first.
  askRemove(name) {
    const before = this.asking;
    this.asking = name;
    if (this.state) this.render(this.state);
    const row = this.body.querySelector(`tr[data-provider="${CSS.escape(name || before || "")}"]`);
    if (row) row.querySelector(name ? "[data-action=keep]" : "[data-action=remove]")?.focus();
  }

  async remove(provider) {
    const others = ((this.state && this.state.providers) || []).filter((p) => p.name !== provider.name);
    this.asking = null;
    const reply = await this.context.client.send({ type: "providers.remove", name: provider.name });
    const bad = reply.type !== "command.ack";
    let text;
    if (bad) text = t("settings.providers.removeRefused", { message: reply.message });
    else if (!others.length) text = t("settings.providers.removedLast", { name: provider.name });
    else if (provider.isDefault && others.length === 1) text = t("settings.providers.removedDefaultOnly", { name: provider.name, other: others[0].name });
    else if (provider.isDefault) text = t("settings.providers.removedDefault", { name: provider.name });
    else text = t("settings.providers.removed", { name: provider.name });
    this.verified.delete(provider.name);
    this.status.textContent = text;
    this.status.classList.toggle("bad", bad);
    if (bad && this.state) this.render(this.state);
  }

  actions(provider) {
    if (this.asking === provider.name) {
      const id = `provider-remove-${provider.name}`;
      return h("div", { class: "confirm", role: "group", "aria-labelledby": id },
        h("p", { id, text: t("settings.providers.removeQuestion", { name: provider.name }) }),
        h("div", { class: "row" },
          h("button", { type: "button", dataset: { action: "keep" }, text: t("settings.providers.removeKeep"), onclick: () => this.askRemove(null) }),
          h("button", { type: "button", class: "danger", text: t("settings.providers.removeConfirm"), onclick: () => this.remove(provider) })));
    }
    return h("div", { class: "row" },
      h("button", { type: "button", text: t("settings.providers.verify"), onclick: () => this.verify(provider) }),
      h("button", { type: "button", text: t("settings.providers.edit"), onclick: () => this.edit(provider) }),
      provider.isDefault ? null : h("button", { type: "button", text: t("settings.providers.setDefault"),
        onclick: () => this.context.change({ type: "providers.setDefault", name: provider.name }, this.status) }),
      h("button", { type: "button", class: "danger", dataset: { action: "remove" }, text: t("settings.providers.remove"),
        "aria-label": t("settings.providers.removeLabel", { name: provider.name }), onclick: () => this.askRemove(provider.name) }));
  }

  show(name, text, cls) {
    this.verified.set(name, { text, cls });
    const out = this.body.querySelector(`tr[data-provider="${CSS.escape(name)}"] [role=status]`);
    if (out) {
      out.textContent = text;
      out.className = cls;
    }
  }

  render(state) {
    this.state = state;
    clear(this.body);
    const providers = state.providers || [];
    if (this.asking && !providers.some((p) => p.name === this.asking)) this.asking = null;
    if (!providers.length) this.body.append(h("tr", {}, h("td", { colspan: 6, class: "muted", text: t("settings.providers.none") })));
    for (const provider of providers) {
      const shown = this.verified.get(provider.name) || { text: "", cls: "small" };
      const out = h("p", { class: shown.cls, role: "status", text: shown.text });
      const label = (key) => ({ "data-label": t(key) });
      this.body.append(h("tr", { dataset: { provider: provider.name } },
        h("td", label("settings.providers.name"), h("strong", { text: provider.name }),
          provider.isDefault ? h("span", { class: "badge", text: t("settings.providers.default") }) : null),
        h("td", { text: provider.kind, ...label("settings.providers.kind") }),
        h("td", label("settings.providers.baseUrl"), h("code", { text: provider.baseUrl })),
        h("td", label("settings.providers.model"), h("code", { text: provider.model })),
        h("td", { class: "small", text: t(`settings.providers.key.${provider.key || "none"}`), ...label("settings.providers.key") }),
        h("td", { class: "actions" }, this.actions(provider), out)));
      const left = leftOut(provider);
      if (left) this.body.append(h("tr", { class: "left-out-row", dataset: { leftOutOf: provider.name } }, h("td", { colspan: 6 }, left)));
    }
  }
}

// The tools the provider's last request could not offer (its tool limit, or a schema its API
// refuses): the model never saw them.
function leftOut(provider) {
  const tools = provider.leftOut || [];
  if (!tools.length) return null;
  return h("details", { class: "left-out" },
    h("summary", { text: t(tools.length === 1 ? "settings.providers.leftOutOne" : "settings.providers.leftOut",
      { count: tools.length }) }),
    h("ul", { class: "small" }, tools.map((tool) => h("li", { dataset: { tool: tool.name } },
      h("code", { text: tool.name }), ` — ${tool.reason}`))));
}
