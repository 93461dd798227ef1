// The side panel (also opened as a tab): threads, the chat stream, approval and other request
// cards, the composer. A view only: every state it shows comes from the host through the
// engine client; after a reconnect it initializes again and redraws from the host's snapshot.
import { UI } from "../generated/protocol.js";
import { ApprovalCard } from "./approval-card.js";
import { browserContext } from "./browser-context.js";
import { ThreadModel } from "./chat-model.js";
import { ChatView } from "./chat-view.js";
import { Composer } from "./composer.js";
import { SkillMentions } from "./skill-mentions.js";
import { clear, h } from "./dom.js";
import { EngineClient } from "./engine-client.js";
import { FirstRun, foldModelMissing, openSettings } from "./first-run.js";
import { linkText } from "./link-text.js";
import { PendingSends } from "./pending-sends.js";
import { budgetCard, interactionCard, recoveryCard } from "./request-cards.js";
import { applyStrings, t } from "./strings.js";
import { ThreadList, lockMark } from "./thread-list.js";

const $ = (selector) => document.querySelector(selector);
const THREAD_KEY = "tabwarden:sidepanel:thread";

applyStrings(document);
const client = new EngineClient("sidepanel");
const model = new ThreadModel();
const firstRun = new FirstRun({ fill, currentTab: async () => (await browserContext()).defaultTab || null });
const chat = new ChatView($("#log"), { empty: () => firstRun.el });
const pending = new PendingSends($("#pending"));
const threads = new ThreadList($("#threads"), $("#others"), select);
const composer = new Composer($("#composer"), { onSend: send, onQueue: queue, onStop: stop });
new SkillMentions(composer, client);
const approvals = new Map(); // every thread's pending approvals: approvalId -> approval
const cards = new Map(); // approvalId -> ApprovalCard, for the shown thread
let current = new URLSearchParams(location.search).get("thread") || sessionStorage.getItem(THREAD_KEY) || null;
let defaultPolicy = UI.defaultPolicy; // until the host's settings say otherwise
let shownThread; // the thread the view was last drawn for
let fatal = null;
let resyncing = null; // the thread whose fresh snapshot was asked for

client.subscribeThreadId = current;
client.on("link.state", showLink);
client.on("initialized", initialized);
client.on("fatal.reload_required", (m) => { fatal = t("link.reload", { message: m.message }); showLink(); });
client.on("thread.snapshot", (m) => {
  if (m.threadId === resyncing) resyncing = null;
  if (m.threadId !== current) return;
  model.load(m.snapshot);
  drawThread();
});
client.on("settings.state", (m) => {
  firstRun.setSettings(m.state); // a broadcast after any page's change carries the providers too
  if (!m.submissionId) return;
  defaultPolicy = m.state.defaultPolicy || defaultPolicy;
  if (!model.meta || !model.meta.permissionPolicy) composer.setPolicy(defaultPolicy);
});
client.on("storage.status", (m) => showStorage(m.available ? "" : m.cause));
client.on("error", (m) => { if (m.code === "storage_unavailable" && !client.initialized) showStorage(m.message); });
client.on("*", route);
client.connect();
if (!current) chat.renderAll(model); // the first-run view, also while the host is not there yet
setupHeader();
document.addEventListener("keydown", keys);

// -- connection ----------------------------------------------------------------------------------

function showLink() {
  const state = client.link || {};
  const line = $("#link");
  let text = "";
  if (fatal) text = fatal;
  else text = linkText(state);
  line.textContent = text;
  line.hidden = !text;
  document.body.classList.toggle("offline", !state.ready);
  document.body.dataset.link = state.ready ? "ready" : "down";
  if (!state.ready) document.body.dataset.engine = "waiting";
  if (!state.ready) for (const card of cards.values()) card.waitingForHost();
}

// While the host's storage does not answer every call is refused; the line says why, and goes
// when it answers again (the host heals by itself).
function showStorage(cause) {
  const line = $("#storage");
  const said = cause ? cause.charAt(0).toUpperCase() + cause.slice(1) : "";
  line.textContent = cause ? t("storage.unavailable", { cause: said }) : "";
  line.hidden = !cause;
}

function initialized(message) {
  const snapshot = message.snapshot || {};
  showStorage(snapshot.storageUnavailable || "");
  document.body.dataset.engine = "ready";
  document.body.dataset.epoch = String(snapshot.epoch || 0);
  resyncing = null; // this snapshot is fresh
  threads.load(snapshot);
  approvals.clear();
  for (const approval of snapshot.pendingApprovals || []) approvals.set(approval.approvalId, approval);
  if (current && snapshot.thread && snapshot.thread.meta.id === current) model.load(snapshot.thread);
  else if (current && !threads.threads.has(current)) setCurrent(null);
  else {
    model.reset(current);
    if (current) resync();
  }
  drawThread();
  client.send({ type: "settings.get" });
}

// -- events --------------------------------------------------------------------------------------

function route(message) {
  if (threads.apply(message)) drawThreads();
  if (message.type === "approval.request") approvals.set(message.approvalId, message);
  if (message.type === "approval.resolved") approvals.delete(message.approvalId);
  if (message.type === "thread.deleted" && message.threadId === current) {
    setCurrent(null);
    model.reset(null);
    drawThread();
    return;
  }
  if (message.type === "activity.updated" && message.activity.threadId === current) {
    model.activity(message.activity);
    drawRequests();
    return;
  }
  if (!message.threadId || message.threadId !== current || !message.stream) {
    if (message.type.startsWith("approval.")) drawThreads();
    return;
  }
  const resolved = message.type === "approval.resolved" ? model.approvals.get(message.approvalId)
    : message.type === "interaction.resolved" ? model.interactions.get(message.interactionId) : null;
  const changed = model.apply(message);
  if (changed === "gap") {
    resync();
    return;
  }
  if (foldModelMissing(model, message)) {
    chat.renderAll(model);
    chat.scrollDown();
    return;
  }
  if (changed === "approvals") {
    drawRequests();
    drawThreads();
    const itemId = message.itemId || (resolved && resolved.itemId);
    if (itemId) chat.update(model.byId.get(itemId));
  } else if (changed === "state") drawState();
  else if (changed === "items") chat.update(model.items[model.items.length - 1]);
  else if (changed) chat.update(model.byId.get(changed));
  if (message.type === "turn.complete") drawState();
}

// Events were missed (or the host changed): ask once for a fresh snapshot of the thread.
function resync() {
  if (resyncing === current) return;
  resyncing = current;
  client.send({ type: "thread.subscribe", threadId: current }).then((reply) => {
    if (reply.type !== "thread.snapshot") resyncing = null;
  });
}

// -- drawing -------------------------------------------------------------------------------------

function drawThread() {
  composer.setPolicy((model.meta && model.meta.permissionPolicy) || defaultPolicy, { fresh: model.threadId !== shownThread });
  shownThread = model.threadId;
  for (const approval of model.approvals.values()) model.remember(approval);
  chat.renderAll(model);
  drawRequests(); // keeps the cards of approvals that still wait (a half-written note survives a reconnect)
  drawState();
  drawThreads();
  chat.scrollDown();
}

function drawThreads() {
  threads.render(current, approvals);
  const title = $("#thread-title");
  title.textContent = current ? threads.title(current) : t("appName");
  title.title = current ? title.textContent : ""; // the whole title, where the header cuts it short
  // The open thread's scope lock, named by its sites.
  const lock = current ? threads.lock(current) : [];
  const mark = $("#thread-lock");
  clear(mark);
  if (lock.length) mark.append(lockMark(lock));
  mark.hidden = !lock.length;
}

function drawState() {
  composer.setRunning(model.running);
  drawConsent();
  const usage = model.usage;
  $("#usage").textContent = usage.input || usage.output ? t("chat.usage", usage) : "";
  const queue = $("#queue");
  clear(queue);
  if (model.queue.length) {
    queue.append(t("chat.queue", { count: model.queue.length }), " ");
    for (const run of model.queue) {
      queue.append(h("span", { class: "queued" }, t("chat.queuedItem", { text: run.inputText || t("chat.queuedEmpty") }), " ",
        h("button", { type: "button", class: "link", text: t("chat.queueRemove"),
          onclick: () => client.send({ type: "queue.remove", threadId: current, runId: run.runId }) })));
    }
  }
}

// What the task may commit without a question, taken from the user's own words: each item says
// what and where, and the user may take it back (that commit then asks again).
function drawConsent() {
  const root = $("#consent");
  clear(root);
  root.hidden = !model.consent.length;
  if (!model.consent.length) return;
  root.append(h("span", { class: "consent-title", text: t("consent.title") }), " ");
  const list = h("ul", { class: "consent-items" });
  for (const item of model.consent) {
    const status = h("span", { class: "consent-status", role: "status" });
    list.append(h("li", { dataset: { consentId: item.id } },
      h("span", { text: item.text, title: item.words ? t("consent.because", { words: item.words }) : undefined }),
      item.id.startsWith("card:") ? h("span", { class: "consent-source", text: ` (${t("consent.onCard")})` }) : "", " ",
      h("button", { type: "button", class: "link", text: t("consent.remove"),
        "aria-label": t("consent.removeLabel", { what: item.text }),
        onclick: () => client.send({ type: "consent.remove", threadId: current, itemId: item.id }).then((reply) => {
          if (reply.type !== "command.ack") status.textContent = t("consent.notRemoved", { message: reply.message || "" });
        }) }), status));
  }
  root.append(list);
}

function drawRequests() {
  const root = $("#requests");
  const stick = chat.atBottom(); // a card takes room from the conversation: keep its end in view
  const sendOp = (op) => client.send(op).then((reply) => {
    // The host records the resolution as the call's result without a live event: redraw from it.
    if (op.type === "run.resolveUncertain" && reply.type === "command.ack") resync();
    return reply;
  });
  let answered = false; // a card the user was on went away: put the focus somewhere sensible
  for (const [id, card] of cards) {
    if (!model.approvals.has(id)) {
      answered = answered || card.el.contains(document.activeElement);
      card.destroy();
      cards.delete(id);
    }
  }
  for (const [id, approval] of model.approvals) {
    model.remember(approval);
    if (cards.has(id)) continue;
    const card = new ApprovalCard(approval, (kind, note) => decide(approval, kind, note), { leave: backToComposer });
    cards.set(id, card);
    root.append(card.el); // it never takes the focus: the user moves to it (see dom.js, CardKeys)
  }
  // The other cards are kept while their request stands (so a half-typed answer survives redraws).
  const wanted = new Map();
  for (const asked of model.interactions.values()) wanted.set(`ask:${asked.interactionId}`, () => interactionCard(asked, sendOp, { leave: backToComposer }));
  if (model.recovery) wanted.set(`recovery:${model.recovery.runId}`, () => recoveryCard(model.recovery, current, sendOp));
  if (model.budgetPause) wanted.set(`budget:${model.budgetPause.runId}`, () => budgetCard(model.budgetPause, current, sendOp));
  for (const el of root.querySelectorAll("[data-request-key]")) {
    if (wanted.has(el.dataset.requestKey)) continue;
    answered = answered || el.contains(document.activeElement);
    el.remove();
  }
  for (const [key, make] of wanted) {
    if (root.querySelector(`[data-request-key="${CSS.escape(key)}"]`)) continue;
    const el = make();
    el.dataset.requestKey = key;
    root.append(el); // a question, like an approval, waits for the user to move to it
  }
  // The next waiting card if there is one (the user is answering cards), else the composer: never
  // the bare page, where a card arriving later would take the focus and the next typed letter.
  if (answered) {
    const next = root.querySelector(".card");
    if (next) next.focus();
    else backToComposer();
  }
  if (stick) chat.scrollDown();
}

function backToComposer() {
  composer.input.focus();
}

// -- answers -------------------------------------------------------------------------------------

// Called inside the user's click or key press: Chrome grants site access only from a gesture,
// so the request is made before anything is awaited.
function decide(approval, kind, note) {
  const request = approval.request;
  const origin = request.targetOrigin;
  const grant = kind.startsWith("accept") && (request.flags || []).includes("host_permission") && origin
    ? chrome.permissions.request({ origins: [`${origin}/*`] }).catch(() => false) : null;
  return (async () => {
    if (grant && !(await grant)) return { type: "refused", message: t("approval.accessRefused", { origin }) };
    const decision = kind === "decline" && note ? { kind, note } : { kind };
    const sent = client.send({ type: "approval.response", approvalId: approval.approvalId, decision });
    if (!client.initialized) cards.get(approval.approvalId)?.waitingForHost(); // kept in the outbox until then
    const reply = await sent;
    if (reply.type === "command.ack") {
      const call = model.byId.get(approval.itemId);
      if (call) call.decision = { kind, note };
    }
    return reply;
  })();
}

// -- composer ------------------------------------------------------------------------------------

async function ensureThread(policy, refused = localError) {
  if (current) return current;
  const reply = await client.send({ type: "thread.create", permissionPolicy: policy });
  if (reply.type !== "command.ack") {
    refused(reply);
    return null;
  }
  select(reply.threadId, { subscribe: false }); // creating a thread subscribes this page to it
  composer.setPolicy(policy); // the thread was created with it
  return reply.threadId;
}

// While the host is away a message waits in the outbox: it stays on screen, marked queued.
function settleFor(message) {
  return client.initialized ? localErrorUnlessAck : pending.add(message.text);
}

function localErrorUnlessAck(reply) {
  if (reply.type === "command.rejected") localError(reply);
}

async function send(message, running) {
  const settle = settleFor(message);
  const threadId = await ensureThread(message.policy, settle);
  if (!threadId) return;
  const attached = message.context.length ? { attachedContext: message.context } : {};
  const reply = running && model.turnId
    ? await client.send({ type: "turn.steer", threadId, expectedTurnId: model.turnId, input: { text: message.text, ...attached } })
    : await client.send({ type: "turn.submit", threadId,
      input: { text: message.text, ...attached, browserContext: await browserContext() },
      overrides: { permissionPolicy: message.policy } });
  settle(reply);
}

async function queue(message) {
  const settle = settleFor(message);
  const threadId = await ensureThread(message.policy, settle);
  if (!threadId) return;
  const attached = message.context.length ? { attachedContext: message.context } : {};
  const reply = await client.send({ type: "turn.enqueue", threadId,
    input: { text: message.text, ...attached, browserContext: await browserContext() },
    overrides: { permissionPolicy: message.policy } });
  settle(reply);
}

function fill(text) {
  const box = $("#message");
  box.value = text;
  box.focus();
}

function stop() {
  if (current) client.send({ type: "turn.interrupt", threadId: current });
}

function localError(reply) {
  const item = model.put({ id: `local:${reply.submissionId}`, kind: "error", code: reply.code, message: reply.message });
  chat.update(item);
}

// -- threads -------------------------------------------------------------------------------------

function setCurrent(threadId) {
  current = threadId;
  client.subscribeThreadId = threadId;
  if (threadId) sessionStorage.setItem(THREAD_KEY, threadId);
  else sessionStorage.removeItem(THREAD_KEY);
  const url = new URL(location.href);
  if (threadId) url.searchParams.set("thread", threadId);
  else url.searchParams.delete("thread");
  history.replaceState(null, "", url);
}

function select(threadId, { subscribe = true } = {}) {
  if (threadId === current && model.threadId === threadId) return;
  setCurrent(threadId);
  model.reset(threadId);
  drawThread();
  document.body.classList.remove("show-threads");
  if (threadId && subscribe) client.send({ type: "thread.subscribe", threadId });
}

// -- keys and header -----------------------------------------------------------------------------

// Page-wide keys only: Stop has its own chord (never plain Esc, which only leaves a card), and
// F6 moves between the waiting card and the composer. A card's letter keys are its own.
function keys(event) {
  if (composer.isStopKey(event)) {
    if (model.running) {
      event.preventDefault();
      stop();
    }
    return;
  }
  if (event.key === "F6" && !event.ctrlKey && !event.altKey && !event.metaKey) {
    const card = $("#requests .card");
    if (!card) return;
    event.preventDefault();
    if (card.contains(document.activeElement)) backToComposer();
    else card.focus();
  }
}

function setupHeader() {
  $("#new-thread").addEventListener("click", () => {
    select(null);
    $("#message").focus();
  });
  $("#open-settings").addEventListener("click", () => chrome.runtime.openOptionsPage());
  $("#open-tab").addEventListener("click", () => {
    const url = chrome.runtime.getURL(`ui/sidepanel.html${current ? `?thread=${encodeURIComponent(current)}` : ""}`);
    chrome.tabs.create({ url });
  });
  const toggle = $("#toggle-threads");
  toggle.addEventListener("click", () => {
    const open = document.body.classList.toggle("show-threads");
    toggle.setAttribute("aria-expanded", String(open));
  });
  chrome.tabs.getCurrent().then((tab) => {
    // Opened as a tab: wide layout with the thread list beside the chat, no "open in a tab".
    if (tab) {
      document.body.classList.add("as-tab");
      $("#open-tab").hidden = true;
    }
  }).catch(() => {});
}
