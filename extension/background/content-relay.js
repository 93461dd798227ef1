// Relays L1 calls to the content script of one frame of one tab, injecting it on demand.
import { protocolError } from "./chunks.js";

export const CONTENT_PROTOCOL = "tabwarden/content-v1";
const EXECUTOR_FILE = "content/executor.js";

let nextRequest = 1;

function send(tabId, frameId, payload) {
  return chrome.tabs.sendMessage(tabId, payload, { frameId });
}

// Ping the executor; inject it when nobody answers. Resolves when the executor is ready.
export async function ensureExecutor(tabId, frameId = 0) {
  try {
    const reply = await send(tabId, frameId, { protocol: CONTENT_PROTOCOL, kind: "ping", requestId: `p${nextRequest++}` });
    if (reply && reply.ok) return;
  } catch (_) {
    // no receiver yet: inject below
  }
  try {
    await chrome.scripting.executeScript({ target: { tabId, frameIds: [frameId] }, files: [EXECUTOR_FILE] });
  } catch (err) {
    const text = String(err && err.message || err);
    const noAccess = /Cannot access|permission|host permission/i.test(text);
    throw Object.assign(protocolError(noAccess ? "host_permission" : "inject_failed", `cannot run in tab ${tabId}: ${text}`), {
      phase: "precheck",
      retryable: !noAccess,
    });
  }
}

export async function pingContent(tabId) {
  await ensureExecutor(tabId, 0);
  const reply = await send(tabId, 0, { protocol: CONTENT_PROTOCOL, kind: "ping", requestId: `p${nextRequest++}` });
  if (!reply || !reply.ok) throw protocolError("internal", "the content script did not answer the ping");
  return reply.result;
}

export async function callContent(message, signal) {
  await ensureExecutor(message.tabId, message.frameId || 0);
  const requestId = `r${nextRequest++}`;
  const deadlineAt = Date.now() + (message.deadlineMs || 15000);
  const onAbort = () => send(message.tabId, message.frameId || 0, { protocol: CONTENT_PROTOCOL, kind: "cancel", requestId: `c${nextRequest++}`, cancelRequestId: requestId }).catch(() => {});
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    const reply = await send(message.tabId, message.frameId || 0, {
      protocol: CONTENT_PROTOCOL, kind: "execute", requestId, tool: message.tool, params: message.params || {}, deadlineAt,
    });
    if (!reply) throw protocolError("channel_closed", "the page closed the message channel without an answer");
    if (!reply.ok) throw Object.assign(protocolError((reply.failure && reply.failure.code) || "unknown", reply.error || "failed"), reply.failure || {});
    return reply.result;
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}
