// Settings: the model's memory — the notes it keeps across threads for this profile. The user
// lists, adds, edits, deletes and clears them. The host checks every change (key, value length,
// number of entries) and sends every page the new `memory.state`, also after the model or the
// REPL wrote, so this view only ever draws what the host sent.
import { clear, h, when } from "./dom.js";
import { t } from "./strings.js";

const PREVIEW_CHARS = 160; // longer values are folded; "Show all" unfolds them in place
// Refusals with a field to point at; others are shown with the host's own message.
const FIELD_OF = { value_too_long: "value", invalid_key: "key" };

// Length as the host counts it (code points), so the counter and the limit agree.
const chars = (text) => [...text].length;

export class MemorySection {
  constructor(root, context) {
    this.root = root;
    this.client = context.client;
    this.state = null; // the last memory.state
    this.editing = null; // the key being edited, or null when adding
    this.unfolded = new Set(); // keys whose whole value is shown (kept across redraws)
    this.summary = h("p", { class: "small", id: "memory-summary" });
    // Filtering happens here, on the state the host sent: every broadcast carries the whole memory.
    this.filter = h("input", { type: "search", id: "memory-filter", autocomplete: "off", maxLength: 200,
      placeholder: t("settings.memory.filterPlaceholder"), oninput: () => this.state && this.show(this.state) });
    this.body = h("tbody");
    this.formTitle = h("h3", { id: "memory-form-title" });
    this.key = h("input", { id: "memory-key", required: true, autocomplete: "off", maxLength: 100,
      "aria-describedby": "memory-error", oninput: () => this.mark(null) });
    this.value = h("textarea", { id: "memory-value", rows: 4, required: true, "aria-describedby": "memory-count memory-error",
      oninput: () => { this.mark(null); this.count(); } });
    this.counter = h("span", { id: "memory-count", class: "muted small" });
    this.error = h("p", { id: "memory-error", class: "bad small", role: "alert" });
    this.submit = h("button", { type: "submit", class: "primary" });
    this.cancel = h("button", { type: "button", text: t("settings.memory.cancelEdit"), onclick: () => this.reset() });
    this.status = h("p", { class: "status small", role: "status" });
    this.clearAll = h("button", { type: "button", class: "danger", text: t("settings.memory.clearAll"), onclick: () => this.askClear(true) });
    this.question = h("p", { id: "memory-confirm-text" });
    this.keep = h("button", { type: "button", text: t("settings.memory.clearKeep"), onclick: () => this.askClear(false) });
    this.confirm = h("div", { class: "confirm", role: "group", "aria-labelledby": "memory-confirm-text", hidden: true },
      this.question,
      h("div", { class: "row" },
        h("button", { type: "button", class: "danger", text: t("settings.memory.clearConfirm"), onclick: () => this.clearEverything() }),
        this.keep));
    root.setAttribute("aria-busy", "true");
    root.append(h("p", { class: "muted small", text: t("settings.memory.help") }), this.summary,
      h("label", { class: "memory-filter" }, t("settings.memory.filter"), this.filter),
      h("div", { class: "table-wrap" }, h("table", { class: "memory stack" },
        h("thead", {}, h("tr", {}, ["settings.memory.key", "settings.memory.value", "settings.memory.size", "settings.memory.updated"]
          .map((k) => h("th", { scope: "col", text: t(k) })), h("th", {}, h("span", { class: "visually-hidden", text: t("settings.memory.actions") })))),
        this.body)),
      h("form", { class: "memory-form", "aria-labelledby": "memory-form-title", onsubmit: (event) => this.save(event) },
        this.formTitle,
        h("label", {}, t("settings.memory.key"), this.key),
        h("label", {}, t("settings.memory.value"), this.value),
        this.counter, this.error,
        h("div", { class: "row" }, this.submit, this.cancel)),
      this.status,
      h("div", { class: "row clear-row" }, this.clearAll), this.confirm);
    this.reset();
    this.client.on("memory.state", (m) => this.show(m));
    this.client.on("initialized", () => this.load()); // again after a reconnect: the host may have changed
  }

  async load() {
    const reply = await this.client.send({ type: "memory.list" });
    if (reply.type !== "memory.state") this.summary.textContent = t("settings.refused", { message: reply.message });
  }

  // -- the list --------------------------------------------------------------------------------

  show(state) {
    this.state = state;
    this.root.setAttribute("aria-busy", "false");
    const entries = state.entries || []; // the host omits an empty list
    const query = this.filter.value.trim().toLowerCase();
    const shown = query ? entries.filter((e) => `${e.key}\n${e.value}`.toLowerCase().includes(query)) : entries;
    this.summary.textContent = t("settings.memory.summary", { count: entries.length, max: state.maxEntries, chars: state.maxValueChars })
      + (query ? ` ${t("settings.memory.showing", { shown: shown.length, count: entries.length })}` : "");
    clear(this.body);
    if (!entries.length) this.body.append(h("tr", {}, h("td", { colspan: 5, class: "muted", text: t("settings.memory.empty") })));
    else if (!shown.length) this.body.append(h("tr", {}, h("td", { colspan: 5, class: "muted", text: t("settings.memory.noMatch", { query: this.filter.value.trim() }) })));
    shown.forEach((entry, i) => this.body.append(this.row(entry, i)));
    const keys = new Set(entries.map((e) => e.key));
    for (const key of this.unfolded) if (!keys.has(key)) this.unfolded.delete(key);
    if (this.editing !== null && !keys.has(this.editing)) this.detach();
    this.clearAll.disabled = !entries.length;
    if (!entries.length) this.askClear(false);
    else if (!this.confirm.hidden) this.question.textContent = t("settings.memory.clearQuestion", { count: entries.length });
    this.count();
  }

  row(entry, i) {
    const size = chars(entry.value);
    const id = `memory-value-${i}`;
    const value = h("div", { id, class: "memory-value" });
    const toggle = size > PREVIEW_CHARS ? h("button", { type: "button", class: "link small", "aria-controls": id }) : null;
    // Folded or not, redrawn in place so the toggle keeps the focus.
    const fold = () => {
      const open = !toggle || this.unfolded.has(entry.key);
      value.textContent = open ? entry.value : `${[...entry.value].slice(0, PREVIEW_CHARS).join("")}…`;
      if (!toggle) return;
      toggle.textContent = open ? t("settings.memory.showLess") : t("settings.memory.showAll", { count: size });
      toggle.setAttribute("aria-expanded", String(open));
    };
    if (toggle) toggle.addEventListener("click", () => {
      if (this.unfolded.has(entry.key)) this.unfolded.delete(entry.key);
      else this.unfolded.add(entry.key);
      fold();
    });
    fold();
    const label = (key) => ({ "data-label": t(key) });
    return h("tr", { dataset: { key: entry.key } },
      h("td", label("settings.memory.key"), h("code", { text: entry.key })),
      h("td", label("settings.memory.value"), value, toggle),
      h("td", { class: "small", text: String(size), ...label("settings.memory.size") }),
      h("td", { class: "small", ...label("settings.memory.updated") }, when(entry.updatedAt),
        h("div", { class: "muted", text: t(`settings.memory.by.${entry.source}`) })),
      h("td", {}, h("div", { class: "row" },
        h("button", { type: "button", text: t("settings.memory.edit"), "aria-label": t("settings.memory.editKey", { key: entry.key }),
          onclick: () => this.edit(entry) }),
        h("button", { type: "button", class: "danger", text: t("settings.memory.delete"), "aria-label": t("settings.memory.deleteKey", { key: entry.key }),
          onclick: () => this.remove(entry.key) }))));
  }

  // -- the form --------------------------------------------------------------------------------

  edit(entry) {
    this.editing = entry.key;
    this.key.value = entry.key;
    this.key.readOnly = true; // a new key is a new entry: add it instead
    this.value.value = entry.value;
    this.formTitle.textContent = t("settings.memory.editTitle", { key: entry.key });
    this.submit.textContent = t("settings.memory.saveEdit");
    this.cancel.hidden = false;
    this.mark(null);
    this.count();
    this.value.focus();
  }

  // The entry being edited is gone (deleted here, by the model or from the REPL): the typed text
  // stays, and saving it adds the entry again.
  detach() {
    this.editing = null;
    this.key.readOnly = false;
    this.formTitle.textContent = t("settings.memory.addTitle");
    this.submit.textContent = t("settings.memory.add");
    this.cancel.hidden = true;
  }

  reset() {
    this.editing = null;
    this.key.readOnly = false;
    this.key.value = "";
    this.value.value = "";
    this.formTitle.textContent = t("settings.memory.addTitle");
    this.submit.textContent = t("settings.memory.add");
    this.cancel.hidden = true;
    this.mark(null);
    this.count();
  }

  count() {
    const max = this.state ? this.state.maxValueChars : 0;
    const size = chars(this.value.value);
    this.counter.textContent = max ? t("settings.memory.count", { count: size, max }) : "";
    this.counter.classList.toggle("bad", !!max && size > max);
  }

  async save(event) {
    event.preventDefault();
    const adding = this.editing === null;
    const key = adding ? this.key.value : this.editing;
    this.say("");
    this.mark(null);
    this.submit.disabled = true;
    const reply = await this.client.send({ type: "memory.set", key, value: this.value.value });
    this.submit.disabled = false;
    if (reply.type !== "command.ack") {
      this.refused(reply); // the typed key and value stay for the user to fix
      return;
    }
    this.say(t(adding ? "settings.memory.added" : "settings.memory.saved", { key: key.trim() }));
    this.reset();
  }

  refused(reply) {
    const max = this.state || {};
    const known = {
      value_too_long: () => t("settings.memory.error.value_too_long", { count: chars(this.value.value), max: max.maxValueChars }),
      invalid_key: () => t("settings.memory.error.invalid_key"),
      memory_full: () => t("settings.memory.error.memory_full", { max: max.maxEntries }),
    }[reply.code];
    const field = FIELD_OF[reply.code] === "value" ? this.value : FIELD_OF[reply.code] === "key" ? this.key : null;
    this.mark(known ? known() : t("settings.refused", { message: reply.message }), field);
    if (field) field.focus();
  }

  // Show (or with null, clear) the form's error, pointing at the field it is about.
  mark(text, field = null) {
    this.error.textContent = text || "";
    for (const input of [this.key, this.value]) {
      if (input === field) input.setAttribute("aria-invalid", "true");
      else input.removeAttribute("aria-invalid");
    }
  }

  // -- delete and clear ------------------------------------------------------------------------

  say(text, bad = false) {
    this.status.textContent = text;
    this.status.classList.toggle("bad", bad);
  }

  async remove(key) {
    this.say("");
    const reply = await this.client.send({ type: "memory.delete", key });
    if (reply.type === "command.ack") this.say(t("settings.memory.deleted", { key }));
    else this.say(t("settings.refused", { message: reply.message }), true);
  }

  // Clearing everything takes two steps: the button asks, the answer that keeps comes first.
  askClear(asking) {
    const focused = this.confirm.contains(document.activeElement);
    this.confirm.hidden = !asking;
    this.clearAll.hidden = asking;
    if (asking) {
      this.question.textContent = t("settings.memory.clearQuestion", { count: (this.state.entries || []).length });
      this.keep.focus();
    } else if (focused) {
      (this.clearAll.disabled ? this.key : this.clearAll).focus();
    }
  }

  async clearEverything() {
    this.say("");
    const reply = await this.client.send({ type: "memory.clear" });
    this.askClear(false);
    if (reply.type === "command.ack") this.say(t("settings.memory.cleared"));
    else this.say(t("settings.refused", { message: reply.message }), true);
  }
}
