// `@` in the composer: typing `@pri` offers the enabled skills whose names match; picking one (Enter,
// Tab or a click) takes the `@pri` out of the text and attaches the skill as a chip, removable
// until the message is sent. The message then carries a context block of kind `skill` naming it;
// the host fills in the skill's instructions, so the page never sends a skill's text.
import { clear, h } from "./dom.js";
import { t } from "./strings.js";

const MAX_SHOWN = 8;
const MENTION = /(^|\s)@([a-z0-9-]*)$/;

export class SkillMentions {
  constructor(composer, client) {
    this.input = composer.input;
    this.skills = []; // enabled skills usable now: [{name, description}]
    this.attached = []; // names, in the order picked
    this.matches = [];
    this.active = 0;
    this.menu = h("ul", { id: "skill-menu", class: "skill-menu", role: "listbox", hidden: true,
      "aria-label": t("composer.skills") });
    this.chips = h("div", { class: "chips", hidden: true });
    this.input.setAttribute("aria-autocomplete", "list");
    this.input.setAttribute("aria-controls", "skill-menu");
    composer.form.prepend(this.chips);
    this.input.after(this.menu);
    this.input.addEventListener("input", () => this.update());
    this.input.addEventListener("blur", () => setTimeout(() => this.close(), 150));
    // Captured on the form, so Enter picks a skill instead of sending while the list is open.
    composer.form.addEventListener("keydown", (event) => this.key(event), true);
    composer.attachments = this;
    client.on("skills.state", (m) => this.learn(m));
    client.on("initialized", async () => {
      const reply = await client.send({ type: "skills.list" });
      if (reply.type === "skills.state") this.learn(reply);
    });
  }

  learn(state) {
    this.skills = (state.skills || []).filter((s) => s.enabled && s.status === "ok")
      .map((s) => ({ name: s.name, description: s.description }));
    const usable = new Set(this.skills.map((s) => s.name));
    this.attached = this.attached.filter((name) => usable.has(name));
    this.drawChips();
  }

  query() {
    const before = this.input.value.slice(0, this.input.selectionStart);
    const found = MENTION.exec(before);
    return found ? found[2] : null;
  }

  update() {
    const query = this.query();
    if (query === null || !this.skills.length) return this.close();
    this.matches = this.skills.filter((s) => s.name.includes(query) && !this.attached.includes(s.name))
      .sort((a, b) => Number(!a.name.startsWith(query)) - Number(!b.name.startsWith(query)))
      .slice(0, MAX_SHOWN);
    if (!this.matches.length) return this.close();
    this.active = Math.min(this.active, this.matches.length - 1);
    this.drawMenu();
  }

  drawMenu() {
    clear(this.menu);
    this.matches.forEach((skill, i) => {
      this.menu.append(h("li", { id: `skill-option-${i}`, role: "option", class: "skill-option",
        "aria-selected": String(i === this.active),
        onmousedown: (event) => { event.preventDefault(); this.pick(skill.name); } },
      h("strong", { text: `@${skill.name}` }), h("span", { class: "muted small", text: ` ${skill.description}` })));
    });
    this.menu.hidden = false;
    this.input.setAttribute("aria-expanded", "true");
    this.input.setAttribute("aria-activedescendant", `skill-option-${this.active}`);
  }

  close() {
    this.menu.hidden = true;
    this.matches = [];
    this.active = 0;
    this.input.setAttribute("aria-expanded", "false");
    this.input.removeAttribute("aria-activedescendant");
  }

  key(event) {
    if (this.menu.hidden || !this.matches.length) return;
    const moves = { ArrowDown: 1, ArrowUp: -1 };
    if (event.key in moves) {
      this.active = (this.active + moves[event.key] + this.matches.length) % this.matches.length;
      this.drawMenu();
    } else if ((event.key === "Enter" && !event.shiftKey) || event.key === "Tab") {
      this.pick(this.matches[this.active].name);
    } else if (event.key === "Escape") {
      this.close();
    } else {
      return;
    }
    event.preventDefault();
    event.stopPropagation();
  }

  pick(name) {
    const caret = this.input.selectionStart;
    const before = this.input.value.slice(0, caret).replace(/@[a-z0-9-]*$/, "");
    this.input.value = before + this.input.value.slice(caret);
    this.input.setSelectionRange(before.length, before.length);
    if (!this.attached.includes(name)) this.attached.push(name);
    this.close();
    this.drawChips();
    this.input.focus();
  }

  drawChips() {
    clear(this.chips);
    for (const name of this.attached) {
      this.chips.append(h("span", { class: "chip", text: t("composer.skillChip", { name }) },
        h("button", { type: "button", class: "link", text: "×", "aria-label": t("composer.skillRemove", { name }),
          onclick: () => { this.attached = this.attached.filter((n) => n !== name); this.drawChips(); this.input.focus(); } })));
    }
    this.chips.hidden = !this.attached.length;
  }

  // The context blocks of the skills attached to the message being sent; the chips go.
  take() {
    const blocks = this.attached.map((name) => ({ kind: "skill", label: name, content: [{ type: "text", text: name }] }));
    this.attached = [];
    this.drawChips();
    return blocks;
  }
}
