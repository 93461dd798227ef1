// Settings: the installed skills. Install one from a path on this computer or a .zip picked here,
// turn it on or off, read its instructions, approve a copy that changed on disk, remove it. The
// host checks every file and sends every page the new `skills.state`; this view draws only that.
// A skill's words come from its author: they are set as text, never as markup.
import { clear, h } from "./dom.js";
import { t } from "./strings.js";

// The bytes of a picked file as base64 (in slices: one huge argument list overflows the stack).
async function base64Of(file) {
  const bytes = new Uint8Array(await file.arrayBuffer());
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

// Where a bundle comes from: the picked .zip if there is one, else the typed path.
export async function sourceOf(pathInput, fileInput) {
  const file = fileInput.files && fileInput.files[0];
  if (file) return { zipName: file.name.slice(0, 255), zipData: await base64Of(file) };
  const path = pathInput.value.trim();
  return path ? { path } : null;
}

export function sizeText(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

// A path field, a .zip picker and a button, as one small form; `onSubmit(source)` gets the source.
export function sourceForm(prefix, { pathLabel, placeholder, pickLabel, button, onSubmit }) {
  const path = h("input", { id: `${prefix}-path`, autocomplete: "off", spellcheck: false, placeholder, maxLength: 4096 });
  const file = h("input", { id: `${prefix}-zip`, type: "file", accept: ".zip,application/zip", "aria-label": pickLabel });
  // One source at a time: typing a path drops a picked file, picking a file clears the path.
  path.addEventListener("input", () => { file.value = ""; });
  file.addEventListener("change", () => { path.value = ""; });
  const submit = h("button", { type: "submit", class: "primary", text: button });
  const form = h("form", { class: "fields source-form", onsubmit: async (event) => {
    event.preventDefault();
    const source = await sourceOf(path, file);
    if (!source) return path.focus();
    submit.disabled = true;
    try { await onSubmit(source); } finally { submit.disabled = false; }
  } },
  h("label", { for: path.id, text: pathLabel }), path,
  h("label", { for: file.id, text: t("settings.skills.orZip") }), file,
  h("div", { class: "fields-actions" }, submit));
  form.reset = () => { path.value = ""; file.value = ""; };
  return form;
}

export class SkillsSection {
  constructor(root, context) {
    this.root = root;
    this.client = context.client;
    this.state = null;
    this.opened = new Map(); // name -> the instructions shown (kept across redraws)
    this.asking = null; // the name whose removal is being confirmed
    this.status = h("p", { class: "status small", role: "status", id: "skills-status" });
    this.replace = h("button", { type: "button", hidden: true, text: t("settings.skills.replace"),
      onclick: () => this.install(this.lastSource, true) });
    this.form = sourceForm("skill", {
      pathLabel: t("settings.skills.path"), placeholder: t("settings.skills.pathPlaceholder"),
      pickLabel: t("settings.skills.pickZip"), button: t("settings.skills.install"),
      onSubmit: (source) => this.install(source, false),
    });
    this.cost = h("p", { class: "small muted", id: "skills-cost" });
    this.list = h("ul", { class: "skills", "aria-label": t("settings.skills.title") });
    root.setAttribute("aria-busy", "true");
    root.append(h("p", { class: "muted small", text: t("settings.skills.help") }), this.form,
      h("div", { class: "row" }, this.status, this.replace), this.cost, this.list);
    this.client.on("skills.state", (m) => this.show(m));
    this.client.on("initialized", () => this.load());
  }

  async load() {
    const reply = await this.client.send({ type: "skills.list" });
    if (reply.type !== "skills.state") this.say(t("settings.refused", { message: reply.message }), true);
  }

  say(text, bad = false) {
    this.status.textContent = text;
    this.status.classList.toggle("bad", bad);
  }

  async install(source, replace) {
    this.say("");
    this.replace.hidden = true;
    const reply = await this.client.send({ type: "skills.install", source, ...(replace ? { replace: true } : {}) });
    if (reply.type === "command.ack") {
      this.form.reset();
      const newest = (this.state && this.state.skills || []).slice().sort((a, b) => b.updatedAt - a.updatedAt)[0];
      this.say(newest ? t("settings.skills.installed", { name: newest.name }) : t("settings.saved"));
      return;
    }
    this.lastSource = source;
    this.replace.hidden = reply.code !== "skill_exists";
    this.say(reply.code === "skill_exists" ? `${t("settings.skills.exists")} ${reply.message}`
      : t("settings.skills.refused", { message: reply.message }), true);
  }

  show(state) {
    this.state = state;
    this.root.setAttribute("aria-busy", "false");
    const skills = state.skills || [];
    this.cost.textContent = t("settings.skills.cost", { chars: state.promptChars || 0, budget: state.promptBudget || 0 })
      + (state.unlisted ? ` ${t("settings.skills.unlisted", { count: state.unlisted })}` : "");
    clear(this.list);
    if (!skills.length) this.list.append(h("li", { class: "muted small", text: t("settings.skills.empty") }));
    for (const skill of skills) this.list.append(this.item(skill));
  }

  item(skill) {
    const status = skill.status !== "ok" ? skill.status : skill.enabled ? "ok" : "off";
    const toggle = h("input", { type: "checkbox", checked: skill.enabled,
      "aria-label": t("settings.skills.onLabel", { name: skill.name }),
      onchange: () => this.change({ type: "skills.setEnabled", name: skill.name, enabled: toggle.checked }) });
    const head = h("div", { class: "skill-head" },
      h("strong", { class: "skill-name", text: skill.name }),
      h("span", { class: `badge ${status === "ok" ? "good" : status === "off" ? "" : "warn"}`,
        text: t(`settings.skills.status.${status}`) }),
      h("span", { class: "grow" }),
      h("label", { class: "switch" }, toggle, t("settings.skills.on")));
    const origin = skill.plugin ? t("settings.skills.fromPlugin", { plugin: skill.plugin })
      : t("settings.skills.fromSource", { source: skill.source });
    const meta = [origin, t("settings.skills.files", { count: skill.files, size: sizeText(skill.size || 0) })];
    if (skill.hasScripts) meta.push(t("settings.skills.scripts"));
    const parts = [head, h("p", { class: "skill-description", text: skill.description }),
      h("p", { class: "muted small", text: meta.join(" · ") })];
    if (skill.status === "changed") {
      parts.push(h("p", { class: "small warn-text", text: t("settings.skills.changedFiles",
        { files: (skill.changedFiles || []).join(", ") }) }));
    }
    if (skill.status === "broken" && skill.problem) parts.push(h("p", { class: "small bad", text: skill.problem }));
    parts.push(this.actions(skill));
    if (this.opened.has(skill.name)) parts.push(this.body(skill.name));
    if (this.asking === skill.name) parts.push(this.confirmRemoval(skill));
    return h("li", { class: "skill", dataset: { name: skill.name, status: skill.status } }, ...parts);
  }

  actions(skill) {
    const open = this.opened.has(skill.name);
    const buttons = [h("button", { type: "button", "aria-expanded": String(open),
      "aria-label": t("settings.skills.viewLabel", { name: skill.name }),
      text: t(open ? "settings.skills.hide" : "settings.skills.view"), onclick: () => this.view(skill.name) })];
    if (skill.status === "changed" && skill.currentHash) {
      buttons.push(h("button", { type: "button", class: "primary", text: t("settings.skills.approve"),
        "aria-label": t("settings.skills.approveLabel", { name: skill.name }),
        onclick: () => this.change({ type: "skills.approve", name: skill.name, contentHash: skill.currentHash }) }));
    }
    if (!skill.plugin) {
      buttons.push(h("button", { type: "button", class: "danger", text: t("settings.skills.remove"),
        "aria-label": t("settings.skills.removeLabel", { name: skill.name }),
        onclick: () => { this.asking = skill.name; this.show(this.state); this.list.querySelector(".confirm .keep")?.focus(); } }));
    }
    return h("div", { class: "row" }, ...buttons);
  }

  body(name) {
    const text = this.opened.get(name);
    return h("pre", { class: "skill-body", tabindex: "0", "aria-label": name, text: text === null ? "…" : text });
  }

  confirmRemoval(skill) {
    const question = h("p", { id: `skill-remove-${skill.name}`, text: t("settings.skills.removeQuestion", { name: skill.name }) });
    return h("div", { class: "confirm", role: "group", "aria-labelledby": question.id }, question,
      h("div", { class: "row" },
        h("button", { type: "button", class: "danger", text: t("settings.skills.remove"), onclick: () => this.remove(skill.name) }),
        h("button", { type: "button", class: "keep", text: t("settings.skills.keep"),
          onclick: () => { this.asking = null; this.show(this.state); } })));
  }

  async view(name) {
    if (this.opened.has(name)) {
      this.opened.delete(name);
      this.show(this.state);
      return;
    }
    this.opened.set(name, null);
    this.show(this.state);
    const reply = await this.client.send({ type: "skills.get", name });
    if (!this.opened.has(name)) return;
    this.opened.set(name, reply.type === "skills.detail" ? reply.body : t("settings.refused", { message: reply.message }));
    this.show(this.state);
  }

  async remove(name) {
    this.asking = null;
    const reply = await this.change({ type: "skills.remove", name });
    if (reply.type === "command.ack") this.say(t("settings.skills.removed", { name }));
  }

  async change(op) {
    this.say("");
    const reply = await this.client.send(op);
    if (reply.type !== "command.ack") {
      this.say(t("settings.refused", { message: reply.message }), true);
      if (this.state) this.show(this.state); // a switch the host refused flips back
    }
    return reply;
  }
}
