// Extension pages (side panel, settings) connect with a runtime Port; the worker relays their
// ops to the host and the host's events back. Ports from anywhere but our own pages are refused.
const ports = new Map(); // clientId -> Port

export function isOwnPage(sender) {
  const base = chrome.runtime.getURL("");
  return !!sender && sender.id === chrome.runtime.id && typeof sender.url === "string" && sender.url.startsWith(base);
}

export function installUiPorts(link) {
  chrome.runtime.onConnect.addListener((port) => {
    if (!isOwnPage(port.sender)) {
      port.disconnect();
      return;
    }
    const clientId = crypto.randomUUID();
    ports.set(clientId, port);
    link.sendEvent({ type: "ui.connect", clientId, senderUrl: port.sender.url.slice(0, 4000), page: (port.name || "page").slice(0, 256) });
    port.postMessage({ type: "link.state", state: link.state() });
    port.onMessage.addListener((op) => {
      if (!op || typeof op !== "object" || Array.isArray(op)) return;
      if (!link.sendEvent({ type: "ui.op", clientId, op })) {
        port.postMessage({ type: "error", code: "not_connected", message: "The Tabwarden host is not connected.", retryable: true, submissionId: op.submissionId });
      }
    });
    port.onDisconnect.addListener(() => {
      ports.delete(clientId);
      link.sendEvent({ type: "ui.disconnect", clientId });
    });
  });
}

export function deliverUiEvent(clientId, event) {
  if (clientId) {
    const port = ports.get(clientId);
    if (port) port.postMessage(event);
    return;
  }
  for (const port of ports.values()) port.postMessage(event);
}

export function broadcastLinkState(state) {
  for (const port of ports.values()) port.postMessage({ type: "link.state", state });
}
