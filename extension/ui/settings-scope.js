// Settings: one thread's scope lock (the sites its changes and navigations are confined to) and
// the sites the user has accepted actions on in it.
import { clear, h } from "./dom.js";
import { t } from "./strings.js";
import { threadLabel } from "./thread-list.js";

export class ScopeSection {
  constructor(root, context, refresh) {
    this.context = context;
    this.refresh = refresh;
    this.status = h("p", { class: "status small", role: "status" });
    this.thread = h("select", { id: "scope-thread", onchange: () => this.choose() });
    this.current = h("p", { class: "small" });
    this.accepted = h("p", { class: "muted small" });
    this.patterns = h("textarea", { id: "scope-patterns", rows: 3, placeholder: "https://shop.example\n*.shop.example",
      "aria-label": t("settings.scope.patterns") });
    root.append(h("p", { class: "muted small", text: t("settings.scope.help") }),
      h("label", { class: "row" }, t("settings.scope.thread"), " ", this.thread),
      this.current, this.accepted, this.patterns,
      h("div", { class: "row" },
        h("button", { type: "button", class: "primary", text: t("settings.scope.save"), onclick: () => this.save() }),
        h("button", { type: "button", text: t("settings.scope.clear"), onclick: () => this.lift() })),
      this.status);
  }

  choose() {
    this.context.scopeThread = this.thread.value || null;
    this.patterns.value = "";
    this.refresh();
  }

  save() {
    const patterns = this.patterns.value.split("\n").map((p) => p.trim()).filter(Boolean);
    if (!patterns.length) {
      this.status.textContent = t("settings.scope.needPatterns");
      return;
    }
    this.context.change({ type: "scope.setLock", threadId: this.thread.value, patterns }, this.status);
  }

  lift() {
    this.context.change({ type: "scope.setLock", threadId: this.thread.value, patterns: null }, this.status);
  }

  render(state) {
    const threads = this.context.threads;
    const chosen = this.context.scopeThread || (threads[0] && threads[0].id) || "";
    clear(this.thread);
    if (!threads.length) this.thread.append(h("option", { value: "", text: t("settings.scope.noThread") }));
    for (const meta of threads) this.thread.append(h("option", { value: meta.id, text: threadLabel(meta) }));
    this.thread.value = chosen;
    if (chosen && !this.context.scopeThread) {
      this.context.scopeThread = chosen;
      this.refresh();
      return;
    }
    const scope = state.thread && state.thread.threadId === chosen ? state.thread : null;
    this.current.textContent = scope && scope.lock ? t("settings.scope.locked", { patterns: scope.lock.join(", ") })
      : t("settings.scope.unlocked");
    this.accepted.textContent = scope && (scope.acceptedOrigins || []).length
      ? t("settings.scope.accepted", { origins: scope.acceptedOrigins.join(", ") }) : "";
    if (scope && scope.lock && !this.patterns.value) this.patterns.value = scope.lock.join("\n");
  }
}
