// Extension pages (side panel, settings) connect with a runtime Port; the worker relays their
// ops to the host and the host's events back. Ports from anywhere but our own pages are refused.
//
// When a host comes up (the first, or a new one after the old one died) it knows no pages, so
// every open port is announced again before the pages hear that the link is ready; the pages
// then initialize again. The worker also keeps an engine client of its own, for listeners in the
// worker (notifications) that must hear about approvals while no page is open.
import { SCHEMA_HASH, UI } from "../generated/protocol.js";
import { CODES } from "./failures.js";
import { isPageReadPort } from "./read-ports.js";

const ports = new Map(); // clientId -> Port
const worker = { clientId: `worker-${crypto.randomUUID()}`, listeners: [] };
let link = null;
let hostReady = false;

export function isOwnPage(sender) {
  const base = chrome.runtime.getURL("");
  return !!sender && sender.id === chrome.runtime.id && typeof sender.url === "string" && sender.url.startsWith(base);
}

// `listener(event)` gets every engine event sent to the worker's own client.
export function onWorkerEvent(listener) {
  worker.listeners.push(listener);
}

function announce(clientId, port) {
  link.sendEvent({ type: "ui.connect", clientId, senderUrl: port.sender.url.slice(0, 4000), page: (port.name || "page").slice(0, 256) });
}

function announceWorker() {
  if (!worker.listeners.length) return;
  link.sendEvent({ type: "ui.connect", clientId: worker.clientId, senderUrl: chrome.runtime.getURL("background/service-worker.js"), page: "worker" });
  link.sendEvent({ type: "ui.op", clientId: worker.clientId, op: {
    type: "initialize", submissionId: crypto.randomUUID(), protocol: UI.protocol, schemaHash: SCHEMA_HASH, clientId: worker.clientId,
  } });
}

export function installUiPorts(nativeLink) {
  link = nativeLink;
  // The toolbar button opens the side panel.
  if (chrome.sidePanel && chrome.sidePanel.setPanelBehavior) {
    chrome.sidePanel.setPanelBehavior({ openPanelOnActionClick: true }).catch(() => {});
  }
  chrome.runtime.onConnect.addListener((port) => {
    if (isPageReadPort(port)) return;
    if (!isOwnPage(port.sender)) {
      port.disconnect();
      return;
    }
    const clientId = crypto.randomUUID();
    ports.set(clientId, port);
    announce(clientId, port);
    port.postMessage({ type: "link.state", state: link.state() });
    port.onMessage.addListener((op) => {
      if (!op || typeof op !== "object" || Array.isArray(op)) return;
      if (!link.sendEvent({ type: "ui.op", clientId, op })) {
        port.postMessage({ type: "error", code: CODES.NOT_CONNECTED, message: "The Tabwarden host is not connected.", retryable: true, submissionId: op.submissionId });
      }
    });
    port.onDisconnect.addListener(() => {
      ports.delete(clientId);
      link.sendEvent({ type: "ui.disconnect", clientId });
    });
  });
}

export function deliverUiEvent(clientId, event) {
  if (clientId === worker.clientId) {
    for (const listener of worker.listeners) {
      try {
        listener(event);
      } catch (err) {
        console.error("Tabwarden: a worker listener failed", err);
      }
    }
    return;
  }
  if (clientId) {
    const port = ports.get(clientId);
    if (port) port.postMessage(event);
    return;
  }
  for (const port of ports.values()) port.postMessage(event);
}

export function broadcastLinkState(state) {
  if (state.ready && !hostReady && link) {
    for (const [clientId, port] of ports) announce(clientId, port);
    announceWorker();
  }
  hostReady = !!state.ready;
  for (const port of ports.values()) port.postMessage({ type: "link.state", state });
}
