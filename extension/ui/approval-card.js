// The approval card: what the agent wants to do, where, on which element, with the complete
// parameters and the reasons in words, and the five answers with their keys. The card only
// sends the user's answer; the host decides what it means (and refuses anything else).
import { UI } from "../generated/protocol.js";
import { clock, h } from "./dom.js";
import { renderParams } from "./params-view.js";
import { t } from "./strings.js";
import { visibleNodes } from "./visible.js";

export const KEY_ACTIONS = { y: "accept", s: "acceptForSession", a: "acceptForSite", n: "note", escape: "cancel" };
// The flags a request carries, listed in the order protocol/permissions.py gives the card.
const FLAG_ORDER = UI.approvalFlagOrder;

export class ApprovalCard {
  // `decide(kind, note)` sends the answer and returns a promise of the host's reply.
  constructor(approval, decide) {
    this.approval = approval;
    this.decide = decide;
    this.receivedAt = Date.now();
    this.busy = false;
    this.el = this.render();
    this.timer = setInterval(() => this.tick(), 1000);
    this.tick();
  }

  get id() {
    return this.approval.approvalId;
  }

  render() {
    const request = this.approval.request;
    const origin = request.targetOrigin;
    const flags = FLAG_ORDER.filter((f) => (request.flags || []).includes(f));
    this.status = h("p", { class: "card-status", role: "status" });
    this.remaining = h("p", { class: "muted small" });
    this.noteBox = h("textarea", { class: "note", rows: 2, placeholder: t("approval.notePlaceholder"), hidden: true,
      "aria-label": t("approval.decline") });
    this.noteSend = h("button", { type: "button", class: "danger", hidden: true, text: t("approval.sendDecline"),
      onclick: () => this.answer("decline") });
    this.noteBox.addEventListener("keydown", (event) => this.noteKey(event));
    const button = (kind, label, key, cls = "") => h("button", {
      type: "button", class: `answer ${cls}`, dataset: { kind }, onclick: () => this.press(kind),
      "aria-keyshortcuts": key,
    }, label, " ", h("kbd", { text: key }));
    this.buttons = h("div", { class: "answers" },
      button("accept", t("approval.allowOnce"), "Y", "primary"),
      button("acceptForSession", t("approval.allowSession"), "S"),
      button("acceptForSite", t(origin ? "approval.allowSite" : "approval.allowSiteNoOrigin"), "A"),
      button("note", t("approval.decline"), "N", "danger"),
      button("cancel", t("approval.cancel"), "Esc"));
    return h("section", { class: "card approval", tabindex: "-1", dataset: { approvalId: this.id },
      "aria-label": t("approval.title", { label: request.label || request.tool }) },
      h("h3", { text: t("approval.title", { label: request.label || request.tool }) }),
      h("dl", { class: "facts" },
        h("dt", { text: t("approval.tool") }), h("dd", {}, h("code", { text: request.tool }),
          request.level ? h("span", { class: "badge", text: request.level }) : null),
        h("dt", { text: t("approval.origin") }), h("dd", { class: "origin", text: origin || t("approval.noOrigin") }),
        request.targetLine ? [h("dt", { text: t("approval.element") }),
          h("dd", {}, h("code", { class: "target-line" }, visibleNodes(request.targetLine)))] : null,
        (request.destinations || []).length ? [h("dt", { text: t("approval.destination") }),
          h("dd", { class: "destinations" }, request.destinations.map((to) => h("code", { class: "destination" }, visibleNodes(to))))]
          : null,
        (request.untrustedValues || []).length ? [h("dt", { text: t("approval.untrustedValues") }),
          h("dd", { class: "untrusted-values" }, request.untrustedValues.map((v) => h("p", { class: "untrusted-value" },
            visibleNodes(t(v.seenAt ? "approval.seenAt" : "approval.notSeen",
              { what: v.what, value: v.value, origin: v.seenAt || "" })))))]
          : null),
      flags.length ? h("ul", { class: "flags" }, flags.map((flag) =>
        h("li", { class: `flag flag-${flag}`, dataset: { flag } }, t(`flag.${flag}`, { origin })))) : null,
      h("h4", { text: t("approval.params") }),
      renderParams(request.params, { passwordTarget: request.passwordTarget === true }),
      request.reason ? h("p", { class: "muted small reason" }, `${t("approval.reason")}: `, visibleNodes(request.reason)) : null,
      this.remaining,
      this.buttons,
      this.noteBox,
      this.noteSend,
      h("p", { class: "muted small", text: t("approval.keys") }),
      this.status);
  }

  tick() {
    const left = (this.approval.remainingMs || 0) - (Date.now() - this.receivedAt);
    this.remaining.textContent = left > 0 ? t("approval.remaining", { time: clock(left) }) : t("approval.expired");
  }

  // A key pressed while the card is the active one (not inside a text field).
  key(event) {
    const action = KEY_ACTIONS[event.key.toLowerCase()];
    if (!action || event.ctrlKey || event.metaKey || event.altKey) return false;
    event.preventDefault();
    this.press(action);
    return true;
  }

  press(kind) {
    if (this.busy) return;
    if (kind === "note") {
      this.noteBox.hidden = false;
      this.noteSend.hidden = false;
      this.noteBox.focus();
      return;
    }
    this.answer(kind);
  }

  noteKey(event) {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      this.answer("decline");
    } else if (event.key === "Escape") {
      event.preventDefault();
      event.stopPropagation();
      this.noteBox.hidden = true;
      this.noteSend.hidden = true;
      this.el.focus();
    }
  }

  async answer(kind) {
    if (this.busy) return;
    const note = kind === "decline" ? this.noteBox.value.trim() : "";
    this.busy = true;
    this.setButtons(true);
    this.status.textContent = t("approval.sent");
    let reply;
    try {
      reply = await this.decide(kind, note);
    } catch (err) {
      reply = { type: "command.rejected", message: String(err && err.message || err) };
    }
    if (reply && reply.type === "command.rejected") {
      this.status.textContent = t("approval.rejected", { message: reply.message });
      this.busy = false;
      this.setButtons(false);
    } else if (reply && reply.type === "refused") {
      this.status.textContent = reply.message;
      this.busy = false;
      this.setButtons(false);
    }
    // An ack: the card closes when the host reports the approval resolved.
  }

  waitingForHost() {
    if (this.busy) this.status.textContent = t("approval.pendingSend");
  }

  setButtons(disabled) {
    for (const b of this.el.querySelectorAll("button")) b.disabled = disabled && !b.classList.contains("link");
  }

  destroy() {
    clearInterval(this.timer);
    this.el.remove();
  }
}
