// Draws the thread's items: user and assistant messages (with reasoning), tool cards, notices and
// errors. One element per item, replaced when that item changes.
import { h, clear } from "./dom.js";
import { actionFacts, actionSentence } from "./action-words.js";
import { modelMissing } from "./first-run.js";
import { maskParams, maskSummary } from "./params-view.js";
import { has, t } from "./strings.js";
import { visibleNodes, visibleString } from "./visible.js";

const DIFF_MARKS = ["--- incremental snapshot ---", "# Page Changes"];

export class ChatView {
  // `empty()` gives the element an empty thread shows (it must carry the class "empty").
  constructor(root, { empty } = {}) {
    this.root = root;
    this.empty = empty || (() => h("p", { class: "empty muted", text: t("chat.empty") }));
    this.elements = new Map();
  }

  renderAll(model) {
    clear(this.root);
    this.elements.clear();
    if (!model.items.length) {
      this.root.append(this.empty());
      return;
    }
    for (const item of model.items) this.update(item);
  }

  update(item) {
    if (!item) return;
    const fresh = render(item);
    const old = this.elements.get(item.id);
    const stick = this.atBottom();
    if (old) old.replaceWith(fresh);
    else {
      const empty = this.root.querySelector(".empty");
      if (empty) empty.remove();
      this.root.append(fresh);
    }
    this.elements.set(item.id, fresh);
    if (stick) this.scrollDown();
  }

  atBottom() {
    const scroller = this.root.closest(".scroll") || this.root;
    return scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 80;
  }

  scrollDown() {
    const scroller = this.root.closest(".scroll") || this.root;
    scroller.scrollTop = scroller.scrollHeight;
  }
}

function render(item) {
  switch (item.kind) {
    case "user":
      return h("article", { class: "item user", dataset: { itemId: item.id } },
        h("h3", { class: "who", text: t("chat.you") }), h("p", { class: "text", text: item.text }));
    case "assistant":
      return h("article", { class: `item assistant${item.done ? "" : " streaming"}`, dataset: { itemId: item.id } },
        h("h3", { class: "who", text: t("chat.assistant") }),
        item.reasoning ? h("details", { class: "reasoning" }, h("summary", { text: t("chat.reasoning") }),
          h("p", { class: "text", text: item.reasoning })) : null,
        item.text ? h("p", { class: "text", text: item.text }) : null,
        !item.done && !item.text ? h("p", { class: "muted", text: item.progress || t("chat.thinking") }) : null);
    case "tool":
      return toolCard(item);
    case "error":
      if (item.code === "not_configured") return modelMissing(item);
      return h("article", { class: "item notice error", role: "alert", dataset: { itemId: item.id } },
        item.errorKind ? t("chat.providerError", { kind: item.errorKind, message: item.message })
          : t("chat.error", { code: item.code, message: item.message }));
    default:
      return notice(item);
  }
}

function notice(item) {
  const kind = item.noticeKind || "";
  let text = item.text;
  if (kind.startsWith("stop:")) {
    const reason = kind.slice(5);
    text = t({ interrupted: "chat.turnInterrupted", error: "chat.turnError", budget_pause: "chat.turnBudget",
      max_tokens: "chat.turnMaxTokens", refusal: "chat.turnRefusal" }[reason] || "chat.turnInterrupted");
  } else if (kind === "alert") text = t("chat.alert", { message: item.text });
  return h("article", { class: `item notice notice-${kind.replace(/[^a-z_]/g, "")}`, dataset: { itemId: item.id } }, text);
}

// What an MCP server's answer holds for the user only (the model never reads it): its text, and
// its images (the host passes only PNG, JPEG, GIF and WebP, as checked base64).
const SHOWN_IMAGES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);
// And its audio, played on the card (the types the host passes).
const SHOWN_AUDIO = new Set(["audio/wav", "audio/x-wav", "audio/wave", "audio/mpeg", "audio/mp3", "audio/ogg", "audio/webm",
  "audio/mp4", "audio/aac", "audio/flac"]);
function serverShown(result) {
  const details = (result && result.details) || {};
  const out = [];
  if (typeof details.forUser === "string" && details.forUser) {
    out.push(h("p", { class: "small for-user" }, visibleNodes(details.forUser.slice(0, 2000))));
  }
  for (const image of Array.isArray(details.images) ? details.images.slice(0, 4) : []) {
    if (!image || !SHOWN_IMAGES.has(image.mimeType) || typeof image.data !== "string" || !/^[A-Za-z0-9+/=]+$/.test(image.data)) continue;
    out.push(h("img", { class: "tool-image", alt: t("tool.image"), src: `data:${image.mimeType};base64,${image.data}` }));
  }
  for (const sound of Array.isArray(details.audio) ? details.audio.slice(0, 2) : []) {
    if (!sound || !SHOWN_AUDIO.has(sound.mimeType) || typeof sound.data !== "string" || !/^[A-Za-z0-9+/=]+$/.test(sound.data)) continue;
    out.push(h("audio", { class: "tool-audio", controls: "", preload: "metadata", "aria-label": t("tool.audio"),
      src: `data:${sound.mimeType};base64,${sound.data}` }));
  }
  return out;
}

// One line says what the call did (or was to do) and how it ended, with the user's decline note
// under it; the parameters, ids, element line, result and the user's answer are under Details.
// MCP servers' text and images for the user stay visible.
function toolCard(item) {
  const status = item.status || "running";
  const result = item.result || null;
  const text = result && result.text ? result.text : "";
  const cut = Math.min(...DIFF_MARKS.map((mark) => text.indexOf(mark)).filter((i) => i >= 0), text.length);
  const summary = text.slice(0, cut).trim();
  const diff = text.slice(cut).replace(DIFF_MARKS[0], "").trim();
  const password = item.passwordTarget === true;
  const params = visibleString(item.params && Object.keys(item.params).length ? JSON.stringify(maskParams(item.params, password))
    : item.summary && item.summary !== "{}" ? maskSummary(item.summary, password) : "");
  const facts = actionFacts({ ...item, params: item.params || parsed(item.summary) }, { fallbackField: true });
  const ended = endedAs(item, status);
  const note = status === "declined" && item.decision && item.decision.kind === "decline" ? item.decision.note : "";
  const details = h("div", { class: "tool-details", id: `details-${item.id}`, hidden: true },
    h("p", { class: "small" }, h("strong", { text: item.label || item.tool }), " ",
      h("code", { class: "muted", text: item.tool }), item.level ? h("span", { class: "badge", text: item.level }) : null),
    params ? h("p", { class: "params-summary" }, h("code", { text: params.length > 300 ? `${params.slice(0, 297)}…` : params })) : null,
    item.targetLine ? h("p", { class: "small" }, h("code", { class: "target-line" }, visibleNodes(t("tool.target", { line: item.targetLine })))) : null,
    summary ? h("pre", { class: "result-text" }, visibleNodes(summary)) : null,
    result && !result.ok && result.code ? h("p", { class: "code small", text: t("tool.code", { code: result.code }) }) : null,
    diff ? h("details", { class: "diff" }, h("summary", { text: t("tool.pageChanges") }), h("pre", {}, visibleNodes(diff))) : null,
    item.decision ? h("p", { class: "decision small" }, decisionText(item.decision)) : null);
  // A toggle on the line itself, so a call takes one line until the user asks for more.
  const toggle = h("button", { type: "button", class: "link details-toggle", "aria-expanded": "false",
    "aria-controls": details.id, text: t("tool.details"), onclick: () => {
      details.hidden = !details.hidden;
      toggle.setAttribute("aria-expanded", String(!details.hidden));
    } });
  return h("article", { class: `item tool status-${status}`, dataset: { itemId: item.id, tool: item.tool || "" } },
    h("p", { class: "tool-line" },
      h("span", { class: `status-dot dot-${status}`, "aria-hidden": "true" }),
      h("span", { class: "what" }, actionSentence(facts, status === "ok" ? "done" : "todo")),
      ended ? h("span", { class: `status status-${status}`, text: ended }) : null,
      toggle),
    // The user's note goes under the line at the card's width: beside it, a long one would leave
    // the call's own words a one-word column.
    note ? h("p", { class: "decline-note", text: t("tool.declinedNote", { note }) }) : null,
    item.progress ? h("p", { class: "muted small", text: item.progress }) : null,
    ...serverShown(result),
    details);
}

// How the call ended, in a word or two (nothing for a call that simply ran).
function endedAs(item, status) {
  const decision = item.decision || {};
  if (decision.kind === "cancel" || (item.result && item.result.code === "cancelled")) return t("tool.stopped");
  if (status === "ok") return "";
  return t(`tool.${status}`);
}

function parsed(summary) {
  try {
    const value = JSON.parse(summary || "{}");
    return value && typeof value === "object" ? value : {};
  } catch {
    return {};
  }
}

function decisionText(decision) {
  if (decision.by && decision.by !== "user" && has(`tool.decision.${decision.by}`)) return t(`tool.decision.${decision.by}`);
  if (decision.kind === "decline" && decision.note) return t("tool.decision.declineNote", { note: decision.note });
  return has(`tool.decision.${decision.kind}`) ? t(`tool.decision.${decision.kind}`) : decision.kind;
}
