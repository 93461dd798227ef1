// Reads reach a frame's executor over a port kept open to its document. A one-off message opens
// a channel for every call (a synchronous step in this worker, and a round of messages in the
// browser); a kept port does not. The port belongs to the document it reached and closes when that
// document goes (a navigation, a reload, a closed tab, the back-forward cache): the next read
// opens one to whatever is there. Reads only: a read a closing port cut off is sent again the
// one-off way (which injects the executor where none answers), and writes keep their one-off
// message, whose failure says whether it was delivered.
//
// A top frame's executor opens the port itself as soon as it is in, while its page still loads: a
// port this worker opens is taken by a loading document only once its load has run, so the read
// that follows a load would wait for it (2-4 ms on a small page, measured).
import { CONTENT } from "../generated/protocol.js";

const kept = new Map(); // `${tabId}:${frameId}` -> { port, opener, pending: Map<requestId, settle> }

function keyOf(tabId, frameId) {
  return `${tabId}:${frameId}`;
}

function close(key, entry) {
  if (kept.get(key) === entry) kept.delete(key);
  for (const settle of entry.pending.values()) settle(null);
  entry.pending.clear();
}

const opened = { byWorker: 0, byPage: 0 };

function open(tabId, frameId) {
  opened.byWorker += 1;
  return keep(keyOf(tabId, frameId), chrome.tabs.connect(tabId, { frameId, name: CONTENT.READ_PORT }), "worker");
}

// `port` serves the reads of `key` from now on (one left by the document before, not closed yet,
// settles its reads when it closes). `opener`: who opened it, "worker" or "page".
function keep(key, port, opener) {
  const entry = { port, opener, pending: new Map() };
  port.onMessage.addListener((reply) => {
    // A document's word that it is reading (`reading`) answers nothing that waits here.
    const settle = reply && reply.reading !== true && entry.pending.get(reply.requestId);
    if (!settle) {
      if (opener === "page") takeUnasked(port, reply);
      return;
    }
    entry.pending.delete(reply.requestId);
    settle(reply);
  });
  port.onDisconnect.addListener(() => {
    void chrome.runtime.lastError; // no executor there, or its document went: expected
    close(key, entry);
    dropUnasked(port);
  });
  kept.set(key, entry);
  return entry;
}

// Whether `port`, connected to this worker, is a read port a document's executor opened (a port
// of that name from a tab): this module's, not the UI's (ui-ports.js).
export function isPageReadPort(port) {
  return port.name === CONTENT.READ_PORT && !!(port.sender && port.sender.tab);
}

// A page's read port is kept for its frame when it comes from our content script in the document
// the tab shows, not a prerendered or cached one.
export function installPagePorts() {
  chrome.runtime.onConnect.addListener((port) => {
    if (!isPageReadPort(port)) return;
    const sender = port.sender;
    const shown = !sender.documentLifecycle || sender.documentLifecycle === "active";
    if (sender.id !== chrome.runtime.id || !(sender.tab.id >= 0) || !shown) {
      port.disconnect();
      return;
    }
    opened.byPage += 1;
    keep(keyOf(sender.tab.id, sender.frameId || 0), port, "page");
  });
}

// requestId -> { tabId, settle, port, documentId }: an answer a top frame's executor is to send
// unasked over the port it opened (the read of a load of the agent's: readAtLoad in executor.js),
// with the port and document that said it would (`reading`) once one has.
const unasked = new Map();

// The answer `requestId` from the top frame of `tabId`, when its document sends it unasked.
// `resultOf(documentId, ms)`: the read's result when `documentId` is the document that said it is
// reading and its answer is a read that went well; null otherwise, or when it has not come within
// `ms`, or once `stop()` is called or that document's port closes.
export function answerUnasked(tabId, requestId) {
  let settle = () => {};
  const promise = new Promise((resolve) => { settle = resolve; });
  const wait = { tabId, settle, port: null, documentId: null };
  unasked.set(requestId, wait);
  return {
    resultOf: (documentId, ms) => {
      if (!documentId || wait.documentId !== documentId) return null;
      let timer = null;
      const late = new Promise((resolve) => { timer = setTimeout(() => resolve(null), ms); });
      return Promise.race([promise, late]).then((answer) => {
        clearTimeout(timer);
        const result = answer && answer.documentId === documentId && answer.reply.ok ? answer.reply.result : null;
        return result && typeof result === "object" ? result : null;
      });
    },
    stop: () => {
      if (unasked.get(requestId) === wait) unasked.delete(requestId);
      settle(null);
    },
  };
}

function takeUnasked(port, reply) {
  const wait = reply && unasked.get(reply.requestId);
  const sender = port.sender;
  if (!wait || !sender || !sender.tab || sender.tab.id !== wait.tabId || sender.frameId) return;
  if (reply.reading === true) {
    wait.port = port;
    wait.documentId = sender.documentId || null;
    return;
  }
  unasked.delete(reply.requestId);
  wait.settle({ reply, documentId: sender.documentId || null });
}

function dropUnasked(port) {
  for (const [requestId, wait] of unasked) {
    if (wait.port !== port) continue;
    unasked.delete(requestId);
    wait.settle(null);
  }
}

// For debugging and tests: the ports kept now (by tab:frame, with who opened each) and how many
// each side has opened.
export function readPortsState() {
  return { kept: Object.fromEntries([...kept].map(([key, entry]) => [key, entry.opener])), opened: { ...opened } };
}

// The executor's answer to one `executor.execute` of a read tool (`message`, built and checked),
// or null when no answer can come over a port (the caller then sends it the one-off way).
export function readOverPort(tabId, frameId, message) {
  const key = keyOf(tabId, frameId);
  let entry;
  try {
    entry = kept.get(key) || open(tabId, frameId);
  } catch (_) {
    return Promise.resolve(null); // no such tab: the one-off message says so
  }
  return new Promise((resolve) => {
    entry.pending.set(message.requestId, resolve);
    try {
      entry.port.postMessage(message);
    } catch (_) {
      close(key, entry); // closed before its disconnect was heard
    }
  });
}
