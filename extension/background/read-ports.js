// Reads reach a frame's executor over a port kept open to its document. A one-off message opens
// a channel for every call (a synchronous step in this worker, and a round of messages in the
// browser); a kept port does not. The port belongs to the document it reached and closes when that
// document goes (a navigation, a reload, a closed tab, the back-forward cache): the next read
// opens one to whatever is there. Reads only: a read a closing port cut off is sent again the
// one-off way (which injects the executor where none answers), and writes keep their one-off
// message, whose failure says whether it was delivered.
import { CONTENT } from "../generated/protocol.js";

const kept = new Map(); // `${tabId}:${frameId}` -> { port, pending: Map<requestId, settle> }

function keyOf(tabId, frameId) {
  return `${tabId}:${frameId}`;
}

function close(key, entry) {
  if (kept.get(key) === entry) kept.delete(key);
  for (const settle of entry.pending.values()) settle(null);
  entry.pending.clear();
}

function open(tabId, frameId) {
  const key = keyOf(tabId, frameId);
  const port = chrome.tabs.connect(tabId, { frameId, name: CONTENT.READ_PORT });
  const entry = { port, pending: new Map() };
  port.onMessage.addListener((reply) => {
    const settle = reply && entry.pending.get(reply.requestId);
    if (!settle) return;
    entry.pending.delete(reply.requestId);
    settle(reply);
  });
  port.onDisconnect.addListener(() => {
    void chrome.runtime.lastError; // no executor there, or its document went: expected
    close(key, entry);
  });
  kept.set(key, entry);
  return entry;
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
