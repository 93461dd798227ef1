// Cards for the other things a run waits on: a question or request to the user (interaction),
// a write that may or may not have happened before a crash (recovery), a token-budget pause.
// Each card sends one op; the host decides and reports back. A question's choices answer to the
// number keys 1-9 from the card's own buttons, under the same guard as an approval's keys (the
// card never takes the focus; see AnswerGuard in dom.js); Esc leaves the card and answers nothing.
import { AnswerGuard, h, isEditable } from "./dom.js";
import { answering, elicitationCard, samplingCard } from "./server-request-cards.js";
import { renderParams } from "./params-view.js";
import { t } from "./strings.js";

// What each kind of request shows and what its two answers say (submit / cancel).
const KINDS = {
  ask_user: { title: "ask.title", submit: "ask.send", cancel: "ask.skip", text: (r) => r.question },
  request_user_action: { title: "ask.actionTitle", submit: "ask.actionDone", cancel: "ask.actionCannot", text: (r) => r.action },
  watch_page: { title: "ask.watchTitle", submit: "ask.watchNow", cancel: "ask.watchStop", text: (r) => r.summary || r.note },
  schedule_resume: { title: "ask.resumeTitle", submit: "ask.resumeNow", cancel: "ask.resumeCancel", text: (r) => r.summary || r.reason },
};

export function interactionCard(asked, send, { leave = () => {} } = {}) {
  const request = asked.request || {};
  if (request.kind === "elicitation") return elicitationCard(asked, send);
  if (request.kind === "sampling") return samplingCard(asked, send);
  const kind = KINDS[request.kind] || KINDS.ask_user;
  const { status, respond } = answering(asked, send);
  const isQuestion = request.kind === "ask_user";
  const answer = isQuestion ? h("input", { type: "text", class: "grow", placeholder: t("ask.placeholder"),
    "aria-label": t("ask.placeholder") }) : null;
  const options = isQuestion && Array.isArray(request.options) ? request.options : [];
  const numbered = options.slice(0, 9);
  const titleId = `ask-${asked.interactionId}`;
  const card = h("section", { class: "card interaction", "aria-labelledby": titleId, "aria-keyshortcuts": "Escape",
    dataset: { interactionId: asked.interactionId, kind: request.kind || "" } },
    h("h3", { id: titleId }, t(kind.title), ": ", h("span", { class: "text", text: kind.text(request) || "" })),
    request.kind === "request_user_action" && request.reason ? h("p", { class: "muted small", text: request.reason }) : null,
    options.length ? h("div", { class: "answers" }, options.map((option, index) =>
      h("button", { type: "button", class: "option", onclick: () => respond({ kind: "submit", value: option }),
        "aria-keyshortcuts": index < 9 ? String(index + 1) : null },
      option, index < 9 ? [" ", h("kbd", { text: String(index + 1) })] : null))) : null,
    h("form", { class: "row", onsubmit: (event) => {
      event.preventDefault();
      respond(isQuestion ? { kind: "submit", value: answer.value } : { kind: "submit" });
    } }, answer, h("button", { type: "submit", class: "primary", text: t(kind.submit) }),
    h("button", { type: "button", text: t(kind.cancel), onclick: () => respond({ kind: "cancel" }) })),
    status);
  const guard = new AnswerGuard(card);
  // Focusable only once in the page, so the panel's focus call as it adds the card does nothing.
  setTimeout(() => card.setAttribute("tabindex", "-1"));
  let answered = false;
  card.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || isEditable(event.target)) return;
    if (event.key === "Escape") {
      event.preventDefault();
      leave();
      return;
    }
    const index = /^[1-9]$/.test(event.key) ? Number(event.key) - 1 : -1;
    if (index < 0 || index >= numbered.length || answered || !guard.takesKey(event)) return;
    event.preventDefault();
    answered = true;
    respond({ kind: "submit", value: numbered[index] });
    status.textContent = t("ask.chosen", { option: numbered[index] }); // announced (role=status)
  });
  return card;
}

export function recoveryCard(run, threadId, send) {
  const tool = run.pendingTool || {};
  const status = h("p", { class: "card-status", role: "status" });
  const resolve = async (resolution) => {
    status.textContent = t("approval.sent");
    const reply = await send({ type: "run.resolveUncertain", threadId, runId: run.runId, resolution });
    if (reply && reply.type === "command.rejected") status.textContent = t("approval.rejected", { message: reply.message });
  };
  return h("section", { class: "card recovery", tabindex: "-1" },
    h("h3", { text: t("recovery.title") }),
    h("p", { text: t("recovery.body", { tool: tool.tool || "?", origin: tool.targetOrigin || t("approval.noOrigin") }) }),
    run.message ? h("p", { class: "muted small", text: run.message }) : null,
    tool.params ? renderParams(tool.params) : null,
    h("div", { class: "answers" },
      h("button", { type: "button", class: "primary", text: t("recovery.done"), onclick: () => resolve("mark_done") }),
      h("button", { type: "button", text: t("recovery.retry"), onclick: () => resolve("retry") }),
      h("button", { type: "button", class: "danger", text: t("recovery.fail"), onclick: () => resolve("fail") })),
    status);
}

export function budgetCard(run, threadId, send) {
  const status = h("p", { class: "card-status", role: "status" });
  return h("section", { class: "card budget" },
    h("h3", { text: t("budget.title") }),
    h("button", { type: "button", class: "primary", text: t("budget.resume"), onclick: async () => {
      status.textContent = t("approval.sent");
      const reply = await send({ type: "run.resume", threadId, runId: run.runId });
      if (reply && reply.type === "command.rejected") status.textContent = t("approval.rejected", { message: reply.message });
    } }),
    status);
}
