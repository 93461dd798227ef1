// The approval card: one plain sentence (what, with which value, into which field, on which
// site) and, for a call of several actions, each action on a line of its own; that the agent
// leaves the page's site for another, when it does; why it asks, in words; what "allow for this
// task" grants; three answers (allow once, allow for this task, decline) and a menu for the rest;
// tool, level, element line, parameters and codes under Details. The card only sends the user's
// answer; the host decides what it means (and refuses anything else).
//
// A card whose call would send values from content the user did not give (possible fraud) is a
// warning: its own head, icon and colour, each such value with where it was seen and the user's
// own value of that kind beside it, Decline first and filled, and only "allow once" to allow
// (no letter key: a reflex Y must not pass a fraud).
//
// The card never takes the focus. Its keys work only from its own buttons, where the user put
// the focus (Tab, a click), and only once the card has settled and the user is not typing
// (AnswerGuard in dom.js, which also drops a click begun before the card was there): Y and N
// answer; a grant is never on a bare letter: "for this task" is its button (Enter or Space on it),
// and A opens a confirmation first, because it adds a lasting rule; Esc leaves the card and
// declines nothing. Each answer is announced in the card's status line.
import { actionFacts, actionSentence, cut, fill, quotedNodes, siteOf, stepFacts } from "./action-words.js";
import { grantWords, whyLines } from "./approval-why.js";
import { AnswerGuard, clock, h, isEditable } from "./dom.js";
import { renderParams } from "./params-view.js";
import { t, template } from "./strings.js";
import { visibleNodes } from "./visible.js";

const KEY_ACTIONS = { y: "accept", n: "decline", a: "confirmSite" };
const WARNING_KEYS = { n: "decline" };
const SHOWS = new Set(["note", "confirmSite"]); // these open part of the card and answer nothing
const CLICKS = new Set(["click", "click_trusted", "click_xy"]);
const MAX_STEPS = 8; // actions listed on the face; the rest are under Details
const MAX_VALUES = 6; // values from content listed on a warning's face
const MAX_URL = 80;
let serial = 0;

// Whether the call would send values from content that the user did not give.
export function isWarning(request) {
  return (request.untrustedValues || []).length > 0 || request.code === "untrusted_value"
    || (request.flags || []).includes("untrusted_value");
}

export class ApprovalCard {
  // `decide(kind, note)` sends the answer and returns a promise of the host's reply; `leave()`
  // puts the focus back where the user was writing.
  constructor(approval, decide, { leave = () => {} } = {}) {
    this.approval = approval;
    this.decide = decide;
    this.leave = leave;
    this.receivedAt = Date.now();
    this.busy = false;
    this.uid = `approval-${++serial}`;
    this.el = this.render();
    this.el.addEventListener("keydown", (event) => this.key(event));
    this.guard = new AnswerGuard(this.el);
    // Focusable (F6, a click on its text, the next card after an answer) only once it is in the
    // page: the panel's focus call as it adds the card finds nothing to focus.
    setTimeout(() => this.el.setAttribute("tabindex", "-1"));
    this.timer = setInterval(() => this.tick(), 1000);
    this.tick();
  }

  get id() {
    return this.approval.approvalId;
  }

  render() {
    const request = this.approval.request;
    const origin = request.targetOrigin;
    const site = siteOf(origin);
    this.warning = isWarning(request);
    this.keys = this.warning ? WARNING_KEYS : KEY_ACTIONS;
    this.status = h("p", { class: "card-status", role: "status", "aria-live": "polite" });
    this.remaining = h("span", { class: "remaining" });
    const sentence = h("h3", { class: "sentence", id: `${this.uid}-sentence` },
      actionSentence(actionFacts(request), "ask"));
    const why = whyLines(request, { values: !this.warning });
    const button = (kind, label, key, cls = "", more = {}) => h("button", {
      type: "button", class: `answer ${cls}`, dataset: SHOWS.has(kind) ? { kind, shows: "" } : { kind },
      onclick: () => this.press(kind),
      "aria-keyshortcuts": key || null, ...more,
    }, label, key ? [" ", h("kbd", { text: key })] : null);
    this.moreButton = h("button", { type: "button", class: "answer more", dataset: { shows: "" }, "aria-expanded": "false",
      "aria-controls": `${this.uid}-menu`, "aria-label": t("approval.more"), title: t("approval.more"), text: "⋯",
      onclick: () => this.toggleMenu() });
    const grant = this.warning ? "" : t("approval.grantLine", { grant: grantWords(request) });
    // On a warning, Decline comes first and filled; allowing is the deliberate, lesser choice.
    this.buttons = h("div", { class: "answers" }, this.warning ? [
      button("decline", t("approval.declineNow"), "N", "primary danger"),
      button("accept", t("approval.allowOnceAnyway"), ""),
    ] : [
      button("accept", t("approval.allowOnce"), "Y", "primary"),
      button("acceptForSession", t("approval.allowSession"), "", "",
        { "aria-describedby": `${this.uid}-grant`, title: grant }),
      button("decline", t("approval.declineNow"), "N", "danger"),
    ], this.moreButton);
    this.menu = h("div", { class: "menu", id: `${this.uid}-menu`, role: "group", "aria-label": t("approval.more"), hidden: true },
      this.warning ? null : button("confirmSite", t(origin ? "approval.allowSite" : "approval.allowSiteNoOrigin"), "A"),
      button("note", t("approval.declineNote")),
      button("cancel", t("approval.stopTask"), "", "danger"));
    this.confirm = h("div", { class: "confirm", role: "group", tabindex: "-1", hidden: true,
      "aria-labelledby": `${this.uid}-confirm` },
      h("p", { id: `${this.uid}-confirm`, text: t(origin ? "approval.confirmSite" : "approval.confirmSiteNoOrigin",
        { tool: request.label || request.tool, site }) }),
      h("div", { class: "answers" },
        h("button", { type: "button", class: "primary", dataset: { kind: "acceptForSite" }, text: t("approval.confirmYes"),
          onclick: () => this.answer("acceptForSite") }),
        h("button", { type: "button", dataset: { shows: "" }, text: t("approval.confirmBack"),
          onclick: () => this.closeConfirm() })));
    this.noteBox = h("textarea", { class: "note", rows: 2, placeholder: t("approval.notePlaceholder"), hidden: true,
      "aria-label": t("approval.declineNote") });
    this.noteSend = h("button", { type: "button", class: "danger", hidden: true, text: t("approval.sendDecline"),
      onclick: () => this.answer("decline") });
    this.noteBox.addEventListener("keydown", (event) => this.noteKey(event));
    const head = this.warning ? h("p", { class: "warning-head", id: `${this.uid}-warning`, text: t("approval.warnHead") }) : null;
    return h("section", { class: `card approval${this.warning ? " warning" : ""}`, dataset: { approvalId: this.id },
      "aria-labelledby": head ? `${head.id} ${sentence.id}` : sentence.id, "aria-describedby": `${this.uid}-why`,
      "aria-keyshortcuts": "Escape" },
      head,
      sentence,
      steps(request),
      leaves(request),
      whyList(this.warning ? untrusted(request) : [], why, `${this.uid}-why`),
      grant ? h("p", { class: "grant", id: `${this.uid}-grant`, text: grant }) : null,
      this.buttons,
      this.menu,
      this.confirm,
      this.noteBox,
      this.noteSend,
      h("details", { class: "details" },
        h("summary", {}, t("approval.details"), " ", this.remaining),
        this.facts(request)),
      this.status);
  }

  // What Details holds: the names and codes a person rarely needs, all of it.
  facts(request) {
    const origin = request.targetOrigin;
    return [
      h("dl", { class: "facts" },
        h("dt", { text: t("approval.tool") }), h("dd", {}, h("code", { text: request.tool }),
          request.level ? h("span", { class: "badge", text: request.level }) : null),
        h("dt", { text: t("approval.origin") }), h("dd", { class: "origin", text: origin || t("approval.noOrigin") }),
        request.targetLine ? [h("dt", { text: t("approval.element") }),
          h("dd", {}, h("code", { class: "target-line" }, visibleNodes(request.targetLine)))] : null,
        (request.destinations || []).length ? [h("dt", { text: t("approval.destination") }),
          h("dd", { class: "destinations" }, request.destinations.map((to) => h("code", { class: "destination" }, visibleNodes(to))))]
          : null,
        request.code ? [h("dt", { text: t("approval.code") }), h("dd", {}, h("code", { class: "code", text: request.code }),
          ...(request.flags || []).map((flag) => h("code", { class: `flag flag-${flag}`, dataset: { flag }, text: flag })))] : null),
      h("h4", { text: t("approval.params") }),
      renderParams(request.params, { passwordTarget: request.passwordTarget === true }),
      request.reason ? h("p", { class: "muted small reason" }, `${t("approval.reason")}: `, visibleNodes(request.reason)) : null,
    ];
  }

  tick() {
    const left = (this.approval.remainingMs || 0) - (Date.now() - this.receivedAt);
    this.remaining.textContent = left > 0 ? t("approval.remaining", { time: clock(left) }) : t("approval.expired");
  }

  // Keys reach the card only from inside it (it listens on its own element); its answers only
  // from its buttons, when the guard takes them.
  key(event) {
    if (event.ctrlKey || event.metaKey || event.altKey || isEditable(event.target)) return;
    if (event.key === "Escape") {
      event.preventDefault();
      event.stopPropagation();
      if (!this.confirm.hidden) this.closeConfirm();
      else if (!this.menu.hidden) {
        this.toggleMenu(false);
        this.moreButton.focus();
      }
      else this.leave();
      return;
    }
    if (!this.confirm.hidden) return; // the lasting rule is added by its button only
    const action = this.keys[event.key.toLowerCase()];
    if (!action || !this.guard.takesKey(event)) return;
    event.preventDefault();
    this.press(action);
  }

  press(kind) {
    if (this.busy) return;
    if (kind === "note") {
      this.toggleMenu(false);
      this.noteBox.hidden = false;
      this.noteSend.hidden = false;
      this.guard.arm();
      this.noteBox.focus();
      return;
    }
    if (this.warning && (kind === "acceptForSession" || kind === "confirmSite")) return; // allow once only
    if (kind === "confirmSite") {
      this.toggleMenu(false);
      this.confirm.hidden = false;
      this.buttons.hidden = true;
      this.status.textContent = t("approval.confirmShown");
      this.guard.arm();
      this.confirm.focus();
      return;
    }
    this.answer(kind);
  }

  toggleMenu(open = this.menu.hidden) {
    this.menu.hidden = !open;
    this.moreButton.setAttribute("aria-expanded", String(open));
    this.guard.arm();
    if (open) this.menu.querySelector("button").focus();
  }

  // Back to the answers, on the button the confirmation came from (the keys stay in reach).
  closeConfirm() {
    this.confirm.hidden = true;
    this.buttons.hidden = false;
    this.status.textContent = "";
    this.guard.arm();
    this.moreButton.focus();
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
      this.guard.arm();
      this.moreButton.focus();
    }
  }

  async answer(kind) {
    if (this.busy) return;
    const note = kind === "decline" ? this.noteBox.value.trim() : "";
    this.busy = true;
    this.setButtons(true);
    this.status.textContent = t("approval.sentAs", { answer: t(`approval.answer.${kind}`) });
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
    // A disabled button drops the focus to the bare page; on the card, the panel knows where the
    // user was when the card goes (the next card, or the composer).
    if (disabled && this.el.contains(document.activeElement)) this.el.focus();
    for (const b of this.el.querySelectorAll("button")) b.disabled = disabled && !b.classList.contains("link");
    if (!disabled) this.guard.arm(); // offered again after a refusal: read it again first
  }

  destroy() {
    clearInterval(this.timer);
    this.guard.stop();
    this.el.remove();
  }
}

// Each action of a multi-action call on a line of its own, as the one-action card would say it.
function steps(request) {
  const all = stepFacts(request);
  if (!all) return null;
  return h("ol", { class: "steps" },
    all.slice(0, MAX_STEPS).map((facts) => h("li", {}, actionSentence(facts, "todo"))),
    all.length > MAX_STEPS ? h("li", { class: "more-steps", text: t("approval.moreSteps", { count: all.length - MAX_STEPS }) })
      : null);
}

// "The agent leaves 127.0.0.1 for b.example (“https://pay.b.example/checkout”)": the registrable
// domains in bold, the URL (which a page or the model chose) quoted as data.
function leaves(request) {
  const others = request.pageSite ? request.otherSites || [] : [];
  if (!others.length) return null;
  const to = others.slice(0, 3).map((other, i) => [i ? t("approval.leavesAnd") : "",
    fill(template("approval.leavesTo"), {
      site: h("strong", { class: "site-name" }, visibleNodes(other.site)),
      url: quotedNodes(cut(other.url, MAX_URL)),
    })]);
  const key = request.tool === "tab_open" ? "approval.leaves.tab" : CLICKS.has(request.tool) ? "approval.leaves.click"
    : "approval.leaves";
  return h("p", { class: "leaves" },
    fill(template(key), { from: h("strong", { class: "site-name" }, visibleNodes(request.pageSite)), to }));
}

// Why it asks: on a warning, each value from content first, with where it was seen and the
// user's own value of that kind beside it when their words hold one.
function whyList(values, lines, id) {
  if (!values.length && !lines.length) return null;
  return h("ul", { class: "why", id }, values, lines.map((line) => h("li", { text: line })));
}

function untrusted(request) {
  // A value typed into a payment field is named twice by the host (as a value, and as what the
  // field holds): shown once.
  const seen = new Set();
  const values = (request.untrustedValues || []).filter((v) => {
    const key = JSON.stringify([v.what, v.value, v.seenAt || ""]);
    return !seen.has(key) && seen.add(key);
  });
  if (!values.length) return [h("li", { class: "untrusted-value", text: t("why.untrusted_value") })];
  const mine = request.usersValues || {};
  const shown = values.slice(0, MAX_VALUES).map((v) => {
    const users = Array.isArray(mine[v.what]) ? mine[v.what] : [];
    return h("li", { class: "untrusted-value", dataset: { kind: v.kind || "" } },
      h("p", { class: "uv-line" }, fill(template(v.seenAt ? "why.untrustedSeen" : "why.untrustedUnseen"), {
        what: v.what, value: valueNodes(v.value, "from-content"),
        origin: h("strong", { class: "uv-origin" }, visibleNodes(v.seenAt || "")),
      })),
      users.length ? h("p", { class: "uv-line users" }, fill(template("approval.warn.yours"), {
        what: v.what, values: users.map((one, i) => [i ? ", " : "", "“", valueNodes(one, "users"), "”"]),
      })) : null);
  });
  if (values.length > MAX_VALUES) {
    shown.push(h("li", { class: "untrusted-value more-values", text: t("approval.warn.more", { count: values.length - MAX_VALUES }) }));
  }
  return shown;
}

// A value as data: invisible characters shown, right-to-left text isolated, long ones cut.
function valueNodes(text, kind) {
  return h("span", { class: `uv-value ${kind} param-text` }, visibleNodes(cut(text, 200)));
}
