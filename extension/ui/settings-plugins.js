// Settings: plugins. A plugin is reviewed before anything of it is installed: the host stages the
// bundle and answers with all it would add (`plugins.reviewed`), shown here on one panel; Install
// sends back the review's id and hash, so exactly the reviewed copy goes in. Installed plugins
// list their skills, servers (each switched on here), rules and site-list entries; Uninstall
// takes all of that away. Every text of a plugin is its author's: set as text only.
import { clear, h } from "./dom.js";
import { sourceForm } from "./settings-skills.js";
import { t } from "./strings.js";

function section(title, items) {
  if (!items.length) return null;
  return h("div", { class: "adds" }, h("h4", { text: title }), h("ul", {}, ...items));
}

function ruleItem(rule) {
  return h("li", {}, h("code", { text: rule.tool }), " @ ", h("code", { text: rule.origin }), " → ",
    h("strong", { text: t(`settings.plugins.verdict.${rule.verdict}`) }));
}

function patternItems(patterns) {
  return (patterns || []).map((p) => h("li", {}, h("code", { text: p })));
}

// Everything a plugin adds, for the review panel and for an installed plugin alike; `server`
// draws one server's line (with a switch once installed).
function additions(data, server) {
  const skills = (data.skills || []).map((s) => (typeof s === "string" ? h("li", {}, h("strong", { text: s }))
    : h("li", {}, h("strong", { text: s.name }), s.description ? ` — ${s.description}` : "",
      s.hasScripts ? h("span", { class: "muted small", text: ` (${t("settings.skills.scripts")})` }) : "")));
  const parts = [
    section(t("settings.plugins.skills"), skills),
    section(t("settings.plugins.servers"), (data.servers || []).map(server)),
    section(t("settings.plugins.rules"), (data.rules || []).map(ruleItem)),
    section(t("settings.plugins.guarded"), patternItems(data.guarded)),
    section(t("settings.plugins.blocked"), patternItems(data.blocked)),
  ].filter(Boolean);
  return parts.length ? parts : [h("p", { class: "muted small", text: t("settings.plugins.addsNothing") })];
}

function who(data) {
  const lines = [];
  if (data.author) lines.push(h("p", { class: "small", text: t("settings.plugins.by", { author: data.author }) }));
  if (data.homepage) lines.push(h("p", { class: "small", text: t("settings.plugins.homepage", { url: data.homepage }) }));
  if (data.description) lines.push(h("p", { class: "plugin-description", text: data.description }));
  return lines;
}

export class PluginsSection {
  constructor(root, context) {
    this.root = root;
    this.client = context.client;
    this.state = null;
    this.asking = null; // the plugin whose uninstall is being confirmed
    this.status = h("p", { class: "status small", role: "status", id: "plugins-status" });
    this.form = sourceForm("plugin", {
      pathLabel: t("settings.plugins.path"), placeholder: t("settings.plugins.pathPlaceholder"),
      pickLabel: t("settings.plugins.pickZip"), button: t("settings.plugins.review"),
      onSubmit: (source) => this.review(source),
    });
    this.panel = h("div", { class: "plugin-review", role: "region", hidden: true, tabindex: "-1",
      "aria-labelledby": "plugin-review-title" });
    this.list = h("ul", { class: "plugins", "aria-label": t("settings.plugins.title") });
    root.setAttribute("aria-busy", "true");
    root.append(h("p", { class: "muted small", text: t("settings.plugins.help") }), this.form, this.status,
      this.panel, this.list);
    this.client.on("skills.state", (m) => this.show(m));
  }

  say(text, bad = false) {
    this.status.textContent = text;
    this.status.classList.toggle("bad", bad);
  }

  // -- review and install ----------------------------------------------------------------------

  async review(source) {
    this.say("");
    this.close();
    const reply = await this.client.send({ type: "plugins.review", source });
    if (reply.type !== "plugins.reviewed") {
      this.say(t("settings.plugins.refused", { message: reply.message }), true);
      return;
    }
    this.reviewed = reply;
    const title = h("h3", { id: "plugin-review-title",
      text: t("settings.plugins.reviewTitle", { name: reply.name, version: reply.version || "" }).replace(" ?", "?") });
    const install = h("button", { type: "button", class: "primary", text: t("settings.plugins.install"), onclick: () => this.install() });
    this.panel.append(title, ...who(reply),
      reply.replaces ? h("p", { class: "small warn-text", text: t("settings.plugins.replaces", { version: reply.replaces }) }) : "",
      h("h4", { text: t("settings.plugins.adds") }),
      ...additions(reply, (s) => h("li", {}, h("strong", { text: s.id }), " ", h("code", { text: s.url }))),
      h("div", { class: "row" }, install,
        h("button", { type: "button", text: t("settings.plugins.cancel"), onclick: () => { this.close(); this.form.querySelector("input").focus(); } })));
    this.panel.hidden = false;
    this.panel.focus();
  }

  close() {
    this.reviewed = null;
    clear(this.panel);
    this.panel.hidden = true;
  }

  async install() {
    const reviewed = this.reviewed;
    if (!reviewed) return;
    const reply = await this.client.send({ type: "plugins.install", reviewId: reviewed.reviewId, contentHash: reviewed.contentHash });
    if (reply.type === "command.ack") {
      this.close();
      this.form.reset();
      this.say(t("settings.plugins.installed", { name: reviewed.name }));
    } else {
      this.say(t("settings.plugins.refused", { message: reply.message }), true);
    }
  }

  // -- installed plugins -----------------------------------------------------------------------

  show(state) {
    this.state = state;
    this.root.setAttribute("aria-busy", "false");
    const plugins = state.plugins || [];
    clear(this.list);
    if (!plugins.length) this.list.append(h("li", { class: "muted small", text: t("settings.plugins.empty") }));
    for (const plugin of plugins) this.list.append(this.item(plugin));
  }

  item(plugin) {
    const server = (s) => {
      const toggle = h("input", { type: "checkbox", checked: !!s.enabled,
        "aria-label": t("settings.plugins.serverOn", { server: s.id }),
        onchange: () => this.change({ type: "plugins.setServerEnabled", name: plugin.name, server: s.id, enabled: toggle.checked }) });
      return h("li", { class: "plugin-server" }, h("label", { class: "switch" }, toggle, h("strong", { text: s.id })), " ",
        h("code", { text: s.url }));
    };
    const parts = [h("div", { class: "skill-head" }, h("strong", { class: "skill-name", text: plugin.name }),
      plugin.version ? h("span", { class: "muted small", text: plugin.version }) : "",
      (plugin.status || "ok") !== "ok" ? h("span", { class: "badge warn", text: t(`settings.skills.status.${plugin.status}`) }) : ""),
      ...who(plugin), ...additions(plugin, server)];
    if (plugin.status === "changed" && plugin.currentHash) {
      parts.push(h("p", { class: "small warn-text", text: t("settings.plugins.changed") }),
        h("button", { type: "button", text: t("settings.plugins.approve"),
          onclick: () => this.change({ type: "plugins.approve", name: plugin.name, contentHash: plugin.currentHash }) }));
    }
    if (this.asking === plugin.name) {
      const question = h("p", { id: `plugin-remove-${plugin.name}`, text: t("settings.plugins.uninstallQuestion", { name: plugin.name }) });
      parts.push(h("div", { class: "confirm", role: "group", "aria-labelledby": question.id }, question,
        h("div", { class: "row" },
          h("button", { type: "button", class: "danger", text: t("settings.plugins.uninstall"), onclick: () => this.uninstall(plugin.name) }),
          h("button", { type: "button", class: "keep", text: t("settings.skills.keep"), onclick: () => { this.asking = null; this.show(this.state); } }))));
    } else {
      parts.push(h("div", { class: "row" }, h("button", { type: "button", class: "danger", text: t("settings.plugins.uninstall"),
        "aria-label": t("settings.plugins.uninstallLabel", { name: plugin.name }),
        onclick: () => { this.asking = plugin.name; this.show(this.state); this.list.querySelector(".confirm .keep")?.focus(); } })));
    }
    return h("li", { class: "plugin", dataset: { name: plugin.name } }, ...parts);
  }

  async uninstall(name) {
    this.asking = null;
    const reply = await this.change({ type: "plugins.remove", name });
    if (reply.type === "command.ack") this.say(t("settings.plugins.uninstalled", { name }));
  }

  async change(op) {
    this.say("");
    const reply = await this.client.send(op);
    if (reply.type !== "command.ack") {
      this.say(t("settings.refused", { message: reply.message }), true);
      if (this.state) this.show(this.state);
    }
    return reply;
  }
}
