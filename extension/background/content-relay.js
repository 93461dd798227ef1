// Relays L1 calls to the page executor of one frame of one tab, injecting it on demand. Writes
// run inside the MAIN-world dialog patch: no patch, no dispatch. A call whose answer never comes
// is reported as `no_reply` with what is known about delivery; the host decides what it means
// (and never replays a write).
import { CONTENT } from "../generated/protocol.js";
import { installDialogPatch, restoreDialogPatch } from "./dialog-patch.js";
import { readOverPort } from "./read-ports.js";
import { CODES, failure } from "./failures.js";

const { TYPES } = CONTENT;
// The declared messages between this worker and the page parts: injected before every part
// that sends or receives them.
const CONTENT_PROTOCOL_FILE = "generated/content-protocol.js";
// Injected in this order; every part guards itself against a second injection.
export const EXECUTOR_FILES = [
  CONTENT_PROTOCOL_FILE,
  "generated/tools.js",
  "generated/roles.js",
  "content/core.js",
  "content/internals-link.js",
  "content/element-role.js",
  "content/accessible-name.js",
  "content/dom-info.js",
  "content/field-facts.js",
  "content/snapshot.js",
  "content/refs.js",
  "content/overlay.js",
  "content/indicator.js",
  "content/actionability.js",
  "content/input.js",
  "content/actions.js",
  "content/reading.js",
  "content/params.js",
  "content/takeover-watch.js",
  "content/executor.js",
];

// The manual-takeover watcher: part of the executor in the top frame, injected alone elsewhere.
const FRAME_TAKEOVER_FILES = [CONTENT_PROTOCOL_FILE, "content/takeover-watch.js"];
const TAKEOVER_SCRIPT_ID = "takeover-watch";
// The ElementInternals observer (page's MAIN world) and its link in our isolated world, at
// document_start beside the watcher: components call attachInternals() as soon as they are
// defined, so only an observer there before them sees it (internals-observer.js).
const INTERNALS_SCRIPTS = [
  { id: "internals-observer", js: ["content/internals-observer.js"], world: "MAIN" },
  { id: "internals-link", js: ["content/internals-link.js"], world: "ISOLATED" },
];

// The watcher also runs at document_start in every frame of every site we may script, before
// any page script, so a page's own listeners cannot stop a person's press before it hears it
// (see takeover-watch.js); it stays quiet until armed. A registered script runs only where the
// extension has host access, as injection does: registering it grants nothing. The registration
// outlives the worker; it is refreshed whenever the worker starts (an update may change files).
async function registerDocumentStartScripts() {
  const everywhere = {
    matches: ["<all_urls>"], allFrames: true, matchOriginAsFallback: true, runAt: "document_start", persistAcrossSessions: true,
  };
  const scripts = [
    { ...everywhere, id: TAKEOVER_SCRIPT_ID, js: FRAME_TAKEOVER_FILES, world: "ISOLATED" },
    ...INTERNALS_SCRIPTS.map((script) => ({ ...everywhere, ...script })),
  ];
  const known = new Set((await chrome.scripting.getRegisteredContentScripts({ ids: scripts.map((s) => s.id) })).map((s) => s.id));
  const fresh = scripts.filter((script) => !known.has(script.id));
  const update = scripts.filter((script) => known.has(script.id));
  if (update.length) await chrome.scripting.updateContentScripts(update);
  if (fresh.length) await chrome.scripting.registerContentScripts(fresh);
}
registerDocumentStartScripts().catch((err) => console.warn("Tabwarden: the document_start scripts were not registered:", err));

const FRAME_WATCH_DEBOUNCE_MS = 200;
const FRAME_WATCH_MAX_WAIT_MS = 1000; // a page that loads frames without pause still gets watchers
const frameWatchTimers = new Map(); // tabId -> { timer, since }

// Runs in each frame's isolated world: the watcher there now reports (the tab is driven).
export function armWatcher() {
  const watch = globalThis.__tabwardenWatch;
  if (watch) watch.arm();
}

function injectFrameWatchers(tabId) {
  const target = { tabId, allFrames: true };
  // Where the registered watcher is already in place, injecting it again does nothing.
  chrome.scripting.executeScript({ target, files: FRAME_TAKEOVER_FILES })
    .then(() => chrome.scripting.executeScript({ target, func: armWatcher }))
    .catch(() => {});
}

// Put the takeover watcher into every frame of the tab the extension may script (frames of other
// sites without access are skipped), and arm it. Called when the executor arrives and whenever a
// frame loads (a watcher reports it), so frames added or navigated later are watched too. The
// first call after a quiet spell injects at once (an agent's write may be over, and a person at
// work in a frame, within moments); the calls that follow it are batched.
export function watchFrames(tabId) {
  const pending = frameWatchTimers.get(tabId);
  if (!pending) {
    injectFrameWatchers(tabId);
    const timer = setTimeout(() => frameWatchTimers.delete(tabId), FRAME_WATCH_DEBOUNCE_MS);
    frameWatchTimers.set(tabId, { timer, since: Date.now() });
    return;
  }
  clearTimeout(pending.timer);
  const wait = Math.max(0, Math.min(FRAME_WATCH_DEBOUNCE_MS, pending.since + FRAME_WATCH_MAX_WAIT_MS - Date.now()));
  const timer = setTimeout(() => {
    frameWatchTimers.delete(tabId);
    injectFrameWatchers(tabId);
  }, wait);
  frameWatchTimers.set(tabId, { timer, since: pending.since });
}

let nextRequest = 1;

// Run in the executor's own (isolated) world of the written frame: the names of the events this
// write's main-world patch sends, which the settle wait listens for; then, after the answer, their
// end. A page sees neither call.
function useWriteChannels(channels) {
  const TW = globalThis.__tabwarden;
  if (TW && typeof TW.useWriteChannels === "function") TW.useWriteChannels(channels);
}

function dropWriteChannels(channels) {
  const TW = globalThis.__tabwarden;
  if (TW && typeof TW.dropWriteChannels === "function") TW.dropWriteChannels(channels);
}

// Tell the written document's executor; without the names it settles as where no patch is in
// place (it waits for a frame after every write and hears of no work in flight), so a failure
// here never stops the write.
function tellExecutor(tabId, frameId, patched, func) {
  const target = patched.documentId ? { tabId, documentIds: [patched.documentId] } : { tabId, frameIds: [frameId] };
  return chrome.scripting.executeScript({ target, func, args: [patched.channels] }).catch(() => {});
}

// To the frame, or to exactly the document `documentId` when given.
function send(tabId, frameId, type, fields, documentId = null) {
  return chrome.tabs.sendMessage(tabId, CONTENT.message(type, fields), documentId ? { documentId } : { frameId });
}

// How long, after the tab's top frame committed another document, a write's answer already on
// its way may still come (the browser closes the channel about 3.5 ms after the commit).
const ANSWER_GRACE_MS = 10;

// A write goes to exactly the document its dialog patch is in (`documentId`): one that replaced
// it meanwhile never receives it unpatched (the send then fails as undelivered). Once the tab's
// top frame has committed another document, no answer can come from the written one (it is gone,
// or frozen in the back-forward cache): the write ends then, past a short grace for an answer
// already on its way, and its failure says the document left (`documentLeft`).
function sendWrite(tabId, frameId, fields, documentId) {
  if (frameId !== 0 || !documentId) return send(tabId, frameId, TYPES.EXECUTOR_EXECUTE, fields);
  const sent = send(tabId, frameId, TYPES.EXECUTOR_EXECUTE, fields, documentId);
  const leftError = (cause) => Object.assign(new Error("the page went away: the tab committed another document before the "
    + `page answered${cause ? ` (${cause.message || cause})` : ""}`), { documentLeft: true });
  let gone = false;
  let timer = null;
  let onCommitted = null;
  const left = new Promise((_, reject) => {
    onCommitted = (details) => {
      if (gone || details.tabId !== tabId || details.frameId !== 0 || !details.documentId || details.documentId === documentId) return;
      if (details.documentLifecycle && details.documentLifecycle !== "active") return; // a prerender is not shown
      gone = true;
      timer = setTimeout(() => reject(leftError()), ANSWER_GRACE_MS);
    };
    chrome.webNavigation.onCommitted.addListener(onCommitted);
  });
  const answered = sent.catch((err) => { throw gone ? leftError(err) : err; });
  return Promise.race([answered, left]).finally(() => {
    clearTimeout(timer);
    chrome.webNavigation.onCommitted.removeListener(onCommitted);
  });
}

// Ping the executor; inject it when nobody answers. Resolves when the executor is ready.
export async function ensureExecutor(tabId, frameId = 0) {
  try {
    const reply = await send(tabId, frameId, TYPES.EXECUTOR_PING, { requestId: `p${nextRequest++}` });
    if (reply && reply.ok) return false;
  } catch (_) {
    // no receiver yet: inject below
  }
  try {
    await chrome.scripting.executeScript({ target: { tabId, frameIds: [frameId] }, files: EXECUTOR_FILES });
    watchFrames(tabId);
  } catch (err) {
    const text = String((err && err.message) || err);
    if (/No tab with id/i.test(text)) throw failure(CODES.TAB_CLOSED, `tab ${tabId} is closed`, "resolve", false, { dispatched: false });
    const noAccess = /Cannot access|permission|host permission|cannot be scripted/i.test(text);
    throw failure(
      noAccess ? CODES.HOST_PERMISSION_REQUIRED : CODES.INJECT_FAILED,
      `cannot run in tab ${tabId}: ${text}`,
      "precheck",
      !noAccess,
      { dispatched: false },
    );
  }
  return true;
}

export async function pingContent(tabId) {
  await ensureExecutor(tabId, 0);
  const reply = await send(tabId, 0, TYPES.EXECUTOR_PING, { requestId: `p${nextRequest++}` });
  if (!reply || !reply.ok) throw failure(CODES.INTERNAL, "the content script did not answer the ping");
  return reply.result;
}

function noReply(err, tool, write) {
  const text = String((err && err.message) || err || "no answer");
  // "Could not establish connection" means nothing was delivered; "message channel closed"
  // means the page went away after it got the request. A document that left may have gone
  // before or after it took the request: that is not known.
  const left = !!(err && err.documentLeft);
  const delivered = !/Could not establish connection|Receiving end does not exist/i.test(text);
  return failure(CODES.NO_REPLY, `the page did not answer ${tool}: ${text}`, "settle", false, {
    channelUnavailable: true, write: !!write, ...(left ? { documentLeft: true } : { delivered }),
  });
}

// Nobody received the message: no executor in that frame (nothing ran).
const NOT_RECEIVED = /Could not establish connection|Receiving end does not exist/i;

// A read goes straight to the executor, without a ping first, over the port kept to its document
// (read-ports.js), else as a one-off message: where none answers (a page not read yet, an
// executor of a reloaded extension), nothing was received, so it is injected and the read sent
// again. A write pings first: its dialog patch must meet an executor in place.
async function readWithoutPing(tabId, frameId, fields) {
  const kept = await readOverPort(tabId, frameId, CONTENT.message(TYPES.EXECUTOR_EXECUTE, fields));
  if (kept) return kept;
  try {
    return await send(tabId, frameId, TYPES.EXECUTOR_EXECUTE, fields);
  } catch (err) {
    if (!NOT_RECEIVED.test(String((err && err.message) || err))) throw err;
  }
  await ensureExecutor(tabId, frameId);
  return send(tabId, frameId, TYPES.EXECUTOR_EXECUTE, fields);
}

// The read of the page a load of the agent's brings, sent to it while it loads and run once its
// load event has (`afterLoad`); null when the parameters do not fit the message.
export function readAfterLoad(params, deadlineMs) {
  // An id of its own (not from the counter, which starts again with the worker while pages stay):
  // the worker's read of the load, under the same id, is the only one the page lets share it.
  const fields = { requestId: `l${crypto.randomUUID()}`, tool: "read_page", params, deadlineAt: Date.now() + deadlineMs, afterLoad: true };
  return CONTENT.problem({ type: TYPES.EXECUTOR_EXECUTE, ...fields }) ? null : CONTENT.message(TYPES.EXECUTOR_EXECUTE, fields);
}

// The call was judged for the page at `url`: nothing goes to a tab that shows another now
// (`target_changed`, unsent, with `tabMoved`; `tab_closed` when the tab is gone). A read in the
// top frame leaves the check to the document it reaches (no look at the tab first: one hop
// fewer), and only a refusal there is checked against the tab.
export async function requireTabAt(tabId, url) {
  let tab;
  try {
    tab = await chrome.tabs.get(tabId);
  } catch (_) {
    throw failure(CODES.TAB_CLOSED, `tab ${tabId} is closed`, "resolve", false, { dispatched: false });
  }
  if ((tab.url || tab.pendingUrl || "") !== url) {
    throw failure(CODES.TARGET_CHANGED, `tab ${tabId} shows another page than the one this call was checked for; look at it again`,
      "dispatch", true, { dispatched: false, tabMoved: true });
  }
}

// The document refused the read because its URL is not the one judged. Where the tab does show
// that URL (the document's own URL differs from the tab's, as after `document.open`), the tab's
// word stands, as when the worker checks it: the read goes again without the document's check.
function movedInPage(reply) {
  return !!(reply && !reply.ok && reply.failure && reply.failure.code === CODES.TARGET_CHANGED
    && reply.failure.details && typeof reply.failure.details.documentUrl === "string");
}

const TAB_GONE = /No tab with id/i;

export async function callContent(message, signal) {
  const tabId = message.tabId;
  const frameId = message.frameId || 0;
  const expectUrl = typeof message.expectUrl === "string" ? message.expectUrl : null;
  const inPage = expectUrl !== null && frameId === 0 && !message.write;
  if (expectUrl !== null && !inPage) await requireTabAt(tabId, expectUrl);
  if (message.write) await ensureExecutor(tabId, frameId);
  if (signal.aborted) throw failure(CODES.ABORTED, "cancelled before dispatch", "precheck", false, { dispatched: false });
  // The read of a load the page was asked to take of itself goes with that read's id (shared there).
  const requestId = typeof message.requestId === "string" ? message.requestId : `r${nextRequest++}`;
  const deadlineAt = Date.now() + (message.deadlineMs || 15000);
  const fields = { requestId, tool: message.tool, params: message.params || {}, deadlineAt, ...(inPage ? { expectUrl } : {}) };
  const problem = CONTENT.problem({ type: TYPES.EXECUTOR_EXECUTE, ...fields });
  if (problem) throw failure(CODES.INVALID_MESSAGE, problem, "precheck", false, { dispatched: false });
  const patched = message.write ? await installDialogPatch(tabId, frameId) : null;
  if (patched) await tellExecutor(tabId, frameId, patched, useWriteChannels);
  const onAbort = () => send(tabId, frameId, TYPES.EXECUTOR_CANCEL, { requestId: `c${nextRequest++}`, cancelRequestId: requestId }).catch(() => {});
  signal.addEventListener("abort", onAbort, { once: true });
  let reply = null;
  let channelError = null;
  try {
    reply = message.write ? await sendWrite(tabId, frameId, fields, patched && patched.documentId)
      : await readWithoutPing(tabId, frameId, fields);
    if (inPage && movedInPage(reply)) {
      await requireTabAt(tabId, expectUrl);
      const { expectUrl: _checked, ...unchecked } = fields;
      reply = await send(tabId, frameId, TYPES.EXECUTOR_EXECUTE, unchecked);
    }
  } catch (err) {
    if (err && err.code) throw err; // a failure of ours (requireTabAt's), not the channel's
    if (TAB_GONE.test(String((err && err.message) || err))) {
      throw failure(CODES.TAB_CLOSED, `tab ${tabId} is closed`, "resolve", false, { dispatched: false });
    }
    channelError = err;
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
  // A document the tab no longer shows is not told the write is over: nothing there listens, and
  // a script sent to it answered only about 20 ms later (measured), which every write that
  // loads another page waited for. Its dialog patch went with it.
  const gone = !!(channelError && channelError.documentLeft);
  const [restore] = patched
    ? await Promise.all([restoreDialogPatch(tabId, frameId), gone ? null : tellExecutor(tabId, frameId, patched, dropWriteChannels)])
    : [null];
  if (channelError || !reply) {
    const err = noReply(channelError || "the page closed the channel without an answer", message.tool, message.write);
    if (restore && !restore.ok) err.details.dialogInterceptionMayRemain = true;
    throw err;
  }
  if (reply.requestId !== requestId) {
    throw failure(CODES.INVALID_MESSAGE, `requestId mismatch: sent ${requestId}, got ${reply.requestId}`, "settle", false, { dispatched: true });
  }
  const dialogs = restore ? restore.reports : [];
  if (restore && !restore.ok) {
    throw failure(CODES.SAFETY_BOUNDARY_UNAVAILABLE, `the page's dialog functions could not be restored (${restore.reason}); reload the page`, "recover", false, {
      restoreAttempts: restore.attempts, dispatched: true, effectMayHaveOccurred: true, dialogInterceptionMayRemain: true,
      dialogs, result: reply.ok ? reply.result : null, failure: reply.ok ? null : reply.failure || null,
    });
  }
  if (!reply.ok) {
    const info = reply.failure || {};
    const details = { ...(info.details || {}) };
    if (dialogs.length) details.dialogs = dialogs;
    throw failure(info.code || CODES.UNKNOWN, info.message || reply.error || "failed", info.phase || "execute", !!info.retryable, details);
  }
  const result = reply.result && typeof reply.result === "object" ? reply.result : { resultText: String(reply.result) };
  if (patched) result.dialogs = dialogs;
  return result;
}
