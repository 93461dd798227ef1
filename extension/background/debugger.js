// The chrome.debugger bridge (L2). The host drives CDP; this file only attaches, forwards and
// reports. One tab is attached at a time (protocol 1.3), on demand; the attachment ends after
// 30 s without commands, when another tab needs the debugger, or when Chrome ends it (the user
// cancelled the infobar, the tab closed). Commands for flat child sessions (out-of-process
// iframes) carry their sessionId in the debuggee. Domains chrome.debugger does not expose are
// refused here with a clear error instead of Chrome's opaque one.
import { markAgentInput } from "./browser-events.js";
import { CODES, errorInfo, failure } from "./failures.js";

const PROTOCOL_VERSION = "1.3";
let idleDetachMs = 30000; // so the debugging infobar does not linger; tests shorten it (console hook)
// The domains chrome.debugger lets an extension use.
export const ALLOWED_DOMAINS = new Set([
  "Accessibility", "Audits", "CacheStorage", "Console", "CSS", "Database", "Debugger", "DOM", "DOMDebugger",
  "DOMSnapshot", "Emulation", "Fetch", "IO", "Input", "Inspector", "Log", "Network", "Overlay", "Page",
  "Performance", "Profiler", "Runtime", "Storage", "Target", "Tracing", "WebAudio", "WebAuthn",
]);

let link = null;
let attached = null; // { tabId, idleTimer, inflight }
let chain = Promise.resolve(); // attach and detach run one at a time

function reportDetached(tabId, reason) {
  if (link) link.sendEvent({ type: "cdp.detached", tabId, reason });
}

// Idle means no command for 30 s and none in flight (a command may wait long for its answer).
function armIdleTimer() {
  if (!attached) return;
  clearTimeout(attached.idleTimer);
  if (attached.inflight > 0) return;
  const tabId = attached.tabId;
  attached.idleTimer = setTimeout(() => detachTab(tabId, "idle").catch(() => {}), idleDetachMs);
}

// Chrome ended the session (or the tab went away): forget it and tell the host why.
function forget(tabId, reason) {
  if (!attached || attached.tabId !== tabId) return;
  clearTimeout(attached.idleTimer);
  attached = null;
  reportDetached(tabId, reason);
}

// Detach on our own initiative; Chrome fires no onDetach for that, so the reason is ours.
export function detachTab(tabId, reason) {
  const run = chain.then(async () => {
    if (!attached || attached.tabId !== tabId) return false;
    clearTimeout(attached.idleTimer);
    attached = null;
    await chrome.debugger.detach({ tabId }).catch(() => {});
    reportDetached(tabId, reason);
    return true;
  });
  chain = run.catch(() => {});
  return run;
}

// Our own session may outlive a service-worker restart: adopt it instead of failing.
async function attachedByUs(tabId) {
  const targets = await chrome.debugger.getTargets().catch(() => []);
  return targets.some((t) => t.tabId === tabId && t.attached && t.extensionId === chrome.runtime.id);
}

function ensureAttached(tabId) {
  const run = chain.then(async () => {
    if (attached && attached.tabId === tabId) return;
    if (attached) {
      const previous = attached.tabId;
      clearTimeout(attached.idleTimer);
      attached = null;
      await chrome.debugger.detach({ tabId: previous }).catch(() => {});
      reportDetached(previous, "switched_tab");
    }
    try {
      await chrome.debugger.attach({ tabId }, PROTOCOL_VERSION);
    } catch (err) {
      const text = String((err && err.message) || err);
      if (/No tab with/i.test(text)) throw failure(CODES.TAB_CLOSED, `tab ${tabId} is closed`, "resolve", false, { dispatched: false });
      if (!(/already attached/i.test(text) && (await attachedByUs(tabId)))) {
        throw failure(CODES.CDP_ATTACH_FAILED, `the debugger cannot attach to tab ${tabId}: ${text}`, "precheck", false, { dispatched: false });
      }
    }
    attached = { tabId, idleTimer: null, inflight: 0 };
    armIdleTimer();
  });
  chain = run.catch(() => {});
  return run;
}

// chrome.debugger reports CDP errors as the JSON text of the protocol error.
function commandFailure(err, method) {
  const text = String((err && err.message) || err);
  let cdp = null;
  try {
    const parsed = JSON.parse(text);
    if (parsed && typeof parsed === "object" && typeof parsed.message === "string") cdp = parsed;
  } catch (_) {
    cdp = null;
  }
  if (cdp) {
    return failure(CODES.CDP_ERROR, `${method}: ${cdp.message}`, "execute", false, { cdpCode: cdp.code ?? null, cdpMessage: cdp.message, method });
  }
  if (/not attached|Detached while handling/i.test(text)) {
    return failure(CODES.CDP_DETACHED, `${method}: the debugger was detached (${text})`, "execute", true, { method });
  }
  if (/No tab with/i.test(text)) return failure(CODES.TAB_CLOSED, `${method}: the tab is closed`, "execute", false, { method });
  return failure(CODES.CDP_ERROR, `${method}: ${text}`, "execute", false, { method });
}

function withDeadline(promise, ms, signal, method) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(failure(CODES.TIMEOUT, `${method} got no answer within ${ms} ms`, "execute", true, { method })), ms);
    const onAbort = () => reject(failure(CODES.CANCELLED, `${method} was cancelled by the host`, "execute", false, { method }));
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
    });
  });
}

function checkDomain(method) {
  const domain = method.split(".")[0];
  if (!ALLOWED_DOMAINS.has(domain)) {
    throw failure(CODES.CDP_DOMAIN_NOT_ALLOWED, `chrome.debugger does not allow the ${domain} domain, so ${method} cannot be sent`,
      "precheck", false, { dispatched: false, method });
  }
}

// Attached to the tab, run `work(session)` counted as in flight (the idle timer waits for it).
async function whileAttached(tabId, signal, what, work) {
  await ensureAttached(tabId);
  if (signal.aborted) throw failure(CODES.CANCELLED, `${what} was cancelled before it was sent`, "precheck", false, { dispatched: false });
  const session = attached;
  session.inflight += 1;
  armIdleTimer();
  try {
    return await work();
  } finally {
    session.inflight -= 1;
    armIdleTimer();
  }
}

// One command, attached already. Debugger input is trusted, like a person's: the takeover
// detector must not mistake it.
async function sendOne(tabId, sessionId, method, params, deadlineMs, signal) {
  const input = method.startsWith("Input.");
  if (input) markAgentInput(tabId);
  const debuggee = sessionId ? { tabId, sessionId } : { tabId };
  try {
    const result = await withDeadline(chrome.debugger.sendCommand(debuggee, method, params || {}), deadlineMs, signal, method);
    return result === undefined ? {} : result;
  } catch (err) {
    throw err && err.code ? err : commandFailure(err, method);
  } finally {
    if (input) markAgentInput(tabId);
  }
}

// Accessibility nodes as the host reads them: DevTools' own annotations (where a name came
// from, Chromium's role numbers) and the inline text boxes under each static text are left out,
// about half of a big tree, before the answer crosses the native port.
export function trimAxNodes(result) {
  if (!result || !Array.isArray(result.nodes)) return result;
  const boxes = new Set();
  const kept = [];
  for (const node of result.nodes) {
    if (node && node.role && node.role.value === "InlineTextBox") {
      boxes.add(node.nodeId);
      continue;
    }
    if (node && node.name) delete node.name.sources;
    if (node) delete node.chromeRole;
    kept.push(node);
  }
  if (boxes.size) {
    for (const node of kept) {
      if (node && Array.isArray(node.childIds)) node.childIds = node.childIds.filter((id) => !boxes.has(id));
    }
  }
  result.nodes = kept;
  return result;
}

// Handler of `cdp.command` frames: {tabId, sessionId?, method, params, deadlineMs, trim?}.
export async function handleCdpCommand(message, signal) {
  const method = String(message.method || "");
  checkDomain(method);
  const result = await whileAttached(message.tabId, signal, method,
    () => sendOne(message.tabId, message.sessionId, method, message.params, message.deadlineMs || 30000, signal));
  return message.trim === "ax_nodes" ? trimAxNodes(result) : result;
}

const MAX_BATCH_STEPS = 32;
const LIST_TABS_MS = 2000;
const sameValue = (a, b) => JSON.stringify(a) === JSON.stringify(b);

// Handler of `cdp.batch` frames: {tabId, steps: [{sessionId?, method, params?, expect?}],
// listTabs?, deadlineMs}. The commands run one after the other with no round trip to the host
// between them; the first that fails, or whose value is not the one expected, ends the batch,
// and the rest is never sent. Answers {results, stoppedAt?, unexpected?, error?} and, with
// listTabs, {tabsBefore, tabsAfter}: every tab as listed before anything past the first group
// of commands is sent (the listing starts with the batch), and after the last one that ran.
export async function handleCdpBatch(message, signal) {
  const steps = Array.isArray(message.steps) ? message.steps : [];
  if (!steps.length || steps.length > MAX_BATCH_STEPS || steps.some((step) => !step || typeof step.method !== "string")) {
    throw failure(CODES.INVALID_PARAMS, `a cdp.batch needs 1 to ${MAX_BATCH_STEPS} steps, each with a method`, "precheck", false,
      { dispatched: false });
  }
  for (const step of steps) checkDomain(step.method);
  const deadline = Date.now() + (message.deadlineMs || 30000);
  // A listing that fails or hangs is null: the host then lists the tabs itself.
  const listTabs = () => (message.listTabs
    ? withDeadline(chrome.tabs.query({}), LIST_TABS_MS, signal, "tabs.query").catch(() => null)
    : Promise.resolve(undefined));
  return whileAttached(message.tabId, signal, "the batch", async () => {
    const outcome = { results: [] };
    let listing = listTabs();
    let group = []; // sent, not yet answered: { index, step, answer }
    // Wait for the commands sent so far, in order; the index of the first that failed or read
    // an unexpected value (the batch stops there), else -1.
    const settle = async () => {
      for (const { index, step, answer } of group) {
        const { result, err } = await answer;
        if (err) {
          Object.assign(outcome, { stoppedAt: index, error: errorInfo(err) });
          return index;
        }
        outcome.results.push(result);
        if (Object.prototype.hasOwnProperty.call(step, "expect")) {
          // What is at `expectAt` (default result.value); nothing there reads as null, on both sides.
          const path = Array.isArray(step.expectAt) && step.expectAt.length ? step.expectAt : ["result", "value"];
          let read = result;
          for (const key of path) read = read !== null && typeof read === "object" && key in read ? read[key] : undefined;
          if (read === undefined) read = null;
          if (!sameValue(read, step.expect)) {
            Object.assign(outcome, { stoppedAt: index, unexpected: read });
            return index;
          }
        }
      }
      group = [];
      return -1;
    };
    let stopped = false;
    for (const [index, step] of steps.entries()) {
      if (index > 0 && !step.overlap) { // a new group: the one before it answered as expected
        if ((await settle()) >= 0) {
          stopped = true;
          break;
        }
        if (listing) { // the tabs are listed before anything past the first group is sent
          const before = await listing;
          listing = null;
          if (before !== undefined) outcome.tabsBefore = before;
        }
      }
      const send = async () => {
        const unsent = { method: step.method, dispatched: false };
        if (signal.aborted) throw failure(CODES.CANCELLED, `${step.method} was cancelled by the host before it was sent`, "execute", false, unsent);
        const left = deadline - Date.now();
        if (left <= 0) throw failure(CODES.TIMEOUT, `the batch ran out of time before ${step.method} was sent`, "execute", true, unsent);
        return sendOne(message.tabId, step.sessionId, step.method, step.params, Math.min(left, step.deadlineMs || left), signal);
      };
      group.push({ index, step, answer: send().then((result) => ({ result }), (err) => ({ err })) });
    }
    if (!stopped) await settle();
    if (listing) {
      const before = await listing;
      if (before !== undefined) outcome.tabsBefore = before;
    }
    const after = await listTabs();
    if (after !== undefined) outcome.tabsAfter = after;
    return outcome;
  });
}

export function installDebugger(nativeLink) {
  link = nativeLink;
  chrome.debugger.onEvent.addListener((source, method, params) => {
    if (!attached || source.tabId !== attached.tabId) return;
    const event = { type: "cdp.event", tabId: source.tabId, method, params: params || {} };
    if (source.sessionId) event.sessionId = source.sessionId;
    link.sendEvent(event);
  });
  chrome.debugger.onDetach.addListener((source, reason) => {
    if (typeof source.tabId === "number") forget(source.tabId, reason || "target_closed");
  });
  chrome.tabs.onRemoved.addListener((tabId) => forget(tabId, "target_closed"));
  // For tests and the worker console: detach as if `reason` happened (the infobar cannot be
  // clicked in a headless browser).
  globalThis.tabwardenDebugger = {
    detach: (tabId, reason = "requested") => detachTab(tabId, reason),
    command: (message) => handleCdpCommand(message, new AbortController().signal),
    batch: (message) => handleCdpBatch(message, new AbortController().signal),
    state: () => ({ attachedTabId: attached ? attached.tabId : null, inflight: attached ? attached.inflight : 0 }),
    setIdleDetachMs: (ms) => { idleDetachMs = ms; armIdleTimer(); return idleDetachMs; },
  };
}
