// Settings: the blocked sites (no access: the agent neither reads nor changes them) and the guarded
// sites (ask before changes). Built-ins are listed (folded) and cannot be
// removed; entries from policy files are marked; the user's own entries can be removed.
import { clear, h } from "./dom.js";
import { t } from "./strings.js";

class OriginList {
  constructor(root, context, list) {
    this.context = context;
    this.list = list;
    this.status = h("p", { class: "status small", role: "status" });
    this.user = h("ul", { class: "origins" });
    this.builtinTitle = h("summary");
    this.builtin = h("ul", { class: "origins builtin" });
    this.input = h("input", { id: `${list}-pattern`, autocomplete: "off", required: true, placeholder: t("settings.origins.pattern"),
      "aria-label": t("settings.origins.pattern") });
    root.append(h("div", { class: `origin-list list-${list}` },
      h("h2", { id: `${list}-title`, text: t(`settings.origins.${list}`) }),
      h("p", { class: "muted small", text: t(`settings.origins.${list}Help`) }),
      this.user,
      h("form", { class: "row", onsubmit: (event) => this.add(event) }, this.input,
        h("button", { type: "submit", text: t("settings.origins.add") })),
      this.status,
      h("details", {}, this.builtinTitle, this.builtin)));
  }

  async add(event) {
    event.preventDefault();
    const reply = await this.context.change({ type: "origins.add", list: this.list, pattern: this.input.value.trim() }, this.status);
    if (reply.type === "command.ack") this.input.value = "";
  }

  render(entries) {
    const builtin = entries.filter((e) => e.origin === "builtin");
    const added = entries.filter((e) => e.origin !== "builtin");
    this.builtinTitle.textContent = t("settings.origins.builtin", { count: builtin.length });
    clear(this.builtin);
    for (const entry of builtin) this.builtin.append(h("li", {}, h("code", { text: entry.pattern })));
    clear(this.user);
    if (!added.length) this.user.append(h("li", { class: "muted small", text: t("settings.origins.none") }));
    for (const entry of added) {
      this.user.append(h("li", { dataset: { pattern: entry.pattern } }, h("code", { text: entry.pattern }), " ",
        entry.removable
          ? h("button", { type: "button", class: "link", text: t("settings.origins.remove"),
            "aria-label": `${t("settings.origins.remove")} ${entry.pattern}`,
            onclick: () => this.context.change({ type: "origins.remove", list: this.list, pattern: entry.pattern }, this.status) })
          : h("span", { class: "muted small", text: entry.origin === "plugin"
            ? t("settings.origins.fromPlugin", { plugin: entry.plugin }) : t("settings.origins.fromFile") })));
    }
  }
}

export class OriginsSection {
  constructor(root, context) {
    this.blocked = new OriginList(root, context, "blocked");
    this.guarded = new OriginList(root, context, "guarded");
  }

  render(state) {
    this.blocked.render(state.blocked || []);
    this.guarded.render(state.guarded || []);
  }
}
