// The composer: the message box, the permission policy switch with its one-line explanation,
// and Send / Steer / Queue / Stop. It reports what the user asked for; the page sends the ops.
import { UI } from "../generated/protocol.js";
import { h } from "./dom.js";
import { t } from "./strings.js";

// In the order protocol/permissions.py declares them.
const POLICIES = UI.permissionPolicies;

export class Composer {
  constructor(root, { onSend, onQueue, onStop }) {
    this.onSend = onSend;
    this.onQueue = onQueue;
    this.onStop = onStop;
    this.running = false;
    this.attachments = null;
    this.input = h("textarea", { id: "message", rows: 3, placeholder: t("composer.placeholder"),
      "aria-label": t("composer.placeholder") });
    this.policy = h("select", { id: "policy", "aria-describedby": "policy-hint" },
      POLICIES.map((p) => h("option", { value: p, text: t(`policy.${p}`) })));
    this.policy.value = UI.defaultPolicy;
    this.hint = h("p", { id: "policy-hint", class: "muted small" });
    this.sendButton = h("button", { type: "submit", class: "primary", text: t("composer.send") });
    this.queueButton = h("button", { type: "button", hidden: true, text: t("composer.queue"), onclick: () => this.queue() });
    this.stopButton = h("button", { type: "button", class: "danger", hidden: true, onclick: () => this.onStop(),
      "aria-keyshortcuts": "Control+Shift+S", title: t("composer.stopKey") }, t("composer.stop"));
    this.form = h("form", { class: "composer", onsubmit: (event) => { event.preventDefault(); this.send(); } },
      this.input,
      h("div", { class: "row" },
        h("label", { class: "policy" }, h("span", { text: t("composer.policy") }), this.policy),
        h("span", { class: "grow" }), this.stopButton, this.queueButton, this.sendButton),
      this.hint);
    this.input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        this.send();
      }
    });
    this.policy.addEventListener("change", () => {
      this.chosen = true; // the user's choice stands until another thread is shown
      this.showHint();
    });
    root.append(this.form);
    this.showHint();
  }

  showHint() {
    this.hint.textContent = t(`policy.${this.policy.value}.hint`);
  }

  // The thread's (or the default) policy; `fresh` when another thread is shown.
  setPolicy(policy, { fresh = false } = {}) {
    if (fresh) this.chosen = false;
    if (POLICIES.includes(policy) && !this.chosen) {
      this.policy.value = policy;
      this.showHint();
    }
  }

  setRunning(running) {
    this.running = running;
    this.queueButton.hidden = !running;
    this.stopButton.hidden = !running;
    this.sendButton.textContent = t(running ? "composer.steer" : "composer.send");
    this.input.placeholder = t(running ? "composer.placeholderRunning" : "composer.placeholder");
  }

  // The Stop chord: Ctrl+Shift+S (Cmd+Shift+S on a Mac).
  isStopKey(event) {
    return (event.ctrlKey || event.metaKey) && event.shiftKey && !event.altKey && event.key.toLowerCase() === "s";
  }

  take() {
    const text = this.input.value.trim();
    if (!text) return null;
    this.input.value = "";
    // Context the user attached (`@skill` chips: skill-mentions.js sets `attachments`).
    const context = this.attachments ? this.attachments.take() : [];
    return { text, policy: this.policy.value, context };
  }

  send() {
    const message = this.take();
    if (message) this.onSend(message, this.running);
  }

  queue() {
    const message = this.take();
    if (message) this.onQueue(message);
  }
}
