// The cards for what an MCP server asks while its tool runs, each with the server's name:
// - a question to the user (elicitation): its message as the server's own words and a form
//   built from the fields the host read from its schema (text, numbers, a yes/no box, a choice).
//   Send answers with the values; Decline tells the server no; Dismiss answers nothing it can
//   use (cancel). The host checks the values again.
// - a request for a model answer (sampling): the exact request (its system prompt and messages,
//   as the server's words, and the token cap); Allow sends it with this thread's model, Refuse
//   does not.
import { AnswerGuard, h } from "./dom.js";
import { t } from "./strings.js";

const INPUT_TYPES = { email: "email", uri: "url", date: "date", "date-time": "datetime-local" };

function control(field) {
  const id = `el-${Math.random().toString(36).slice(2)}`;
  const label = h("label", { for: id }, field.title || field.name, field.required ? " *" : "");
  let input;
  if (field.type === "boolean") {
    input = h("input", { id, type: "checkbox", checked: field.default === true });
  } else if (Array.isArray(field.enum)) {
    const names = Array.isArray(field.enumNames) ? field.enumNames : field.enum;
    input = h("select", { id, required: !!field.required },
      field.required ? null : h("option", { value: "", text: "" }),
      field.enum.map((value, index) => h("option", { value, text: names[index] ?? value, selected: field.default === value })));
  } else if (field.type === "number" || field.type === "integer") {
    input = h("input", { id, type: "number", step: field.type === "integer" ? "1" : "any", required: !!field.required,
      min: field.minimum ?? null, max: field.maximum ?? null, value: typeof field.default === "number" ? String(field.default) : null });
  } else {
    input = h("input", { id, type: INPUT_TYPES[field.format] || "text", required: !!field.required,
      maxlength: field.maxLength ?? null, value: typeof field.default === "string" ? field.default : null });
  }
  const hint = field.description ? h("span", { class: "muted small", text: field.description }) : null;
  const read = () => {
    if (field.type === "boolean") return input.checked;
    if (input.value === "") return null;
    if (field.type === "number" || field.type === "integer") return Number(input.value);
    return input.value;
  };
  return { row: h("div", { class: "field" }, label, input, hint), name: field.name, read };
}

// An interaction card's status line and its `respond(response)`: the answer sent as
// `interaction.response`, the line saying it went, or why the host refused it.
export function answering(asked, send) {
  const status = h("p", { class: "card-status", role: "status" });
  const respond = async (response) => {
    status.textContent = t("approval.sent");
    const reply = await send({ type: "interaction.response", interactionId: asked.interactionId, response });
    if (reply && reply.type === "command.rejected") status.textContent = t("approval.rejected", { message: reply.message });
  };
  return { status, respond };
}

export function elicitationCard(asked, send) {
  const request = asked.request || {};
  const { status, respond } = answering(asked, send);
  const controls = (Array.isArray(request.fields) ? request.fields : []).map(control);
  const titleId = `ask-${asked.interactionId}`;
  const form = h("form", { class: "elicitation-form", onsubmit: (event) => {
    event.preventDefault();
    const value = {};
    for (const item of controls) {
      const read = item.read();
      if (read !== null) value[item.name] = read;
    }
    respond({ kind: "submit", value });
  } }, controls.map((item) => item.row),
  h("div", { class: "row" },
    h("button", { type: "submit", class: "primary", text: t("elicit.send") }),
    h("button", { type: "button", text: t("elicit.decline"), onclick: () => respond({ kind: "cancel", note: "decline" }) }),
    h("button", { type: "button", text: t("elicit.dismiss"), onclick: () => respond({ kind: "cancel" }) })));
  const card = h("section", { class: "card interaction elicitation", "aria-labelledby": titleId,
    dataset: { interactionId: asked.interactionId, kind: "elicitation" } },
  h("h3", { id: titleId }, t("elicit.title", { server: String(request.server || "?") })),
  h("blockquote", { class: "server-words", "aria-label": t("elicit.serverWords") }, String(request.message || "")),
  form, status);
  new AnswerGuard(card); // the card's keys answer only from its own buttons, as every card's
  setTimeout(() => card.setAttribute("tabindex", "-1"));
  return card;
}

export function samplingCard(asked, send) {
  const request = asked.request || {};
  const { status, respond } = answering(asked, send);
  const titleId = `ask-${asked.interactionId}`;
  const words = (role, text) => h("div", { class: "sampled" }, h("span", { class: "muted small", text: t(`sample.${role}`) }),
    h("blockquote", { class: "server-words" }, String(text || "")));
  const card = h("section", { class: "card interaction sampling", "aria-labelledby": titleId,
    dataset: { interactionId: asked.interactionId, kind: "sampling" } },
  h("h3", { id: titleId }, t("sample.title", { server: String(request.server || "?") })),
  h("p", { class: "small", text: t("sample.cap", { tokens: String(request.maxTokens || "?") }) }),
  request.system ? words("system", request.system) : null,
  (Array.isArray(request.messages) ? request.messages : []).map((m) => words(m.role === "assistant" ? "assistant" : "user", m.text)),
  h("div", { class: "row" },
    h("button", { type: "button", class: "primary", text: t("sample.allow"), onclick: () => respond({ kind: "submit" }) }),
    h("button", { type: "button", text: t("sample.refuse"), onclick: () => respond({ kind: "cancel", note: "decline" }) })),
  status);
  new AnswerGuard(card);
  setTimeout(() => card.setAttribute("tabindex", "-1"));
  return card;
}
