// Tabwarden page executor: injected on demand into one frame, answers the service worker.
// A classic script (content scripts cannot be modules); guarded against double injection.
(() => {
  if (window.__tabwardenExecutor) return;
  const PROTOCOL = "tabwarden/content-v1";
  const tools = {};
  window.__tabwardenExecutor = { tools, version: 1 };

  chrome.runtime.onMessage.addListener((message, sender, sendResponse) => {
    if (!message || message.protocol !== PROTOCOL || sender.id !== chrome.runtime.id) return false;
    if (message.kind === "ping") {
      sendResponse({ ok: true, result: "pong" });
      return false;
    }
    if (message.kind === "execute") {
      const tool = tools[message.tool];
      if (!tool) {
        sendResponse({ ok: false, error: `unknown content tool ${message.tool}`, failure: { code: "unsupported", message: `unknown content tool ${message.tool}`, phase: "resolve", retryable: false } });
        return false;
      }
      Promise.resolve()
        .then(() => tool(message.params || {}, message))
        .then((result) => sendResponse({ ok: true, result }), (err) => sendResponse({ ok: false, error: String(err && err.message || err), failure: err && err.code ? { code: err.code, message: String(err.message), phase: err.phase || "execute", retryable: !!err.retryable } : undefined }));
      return true;
    }
    return false;
  });
})();
