// Manual takeover: a trusted mouse press or key press in a tab the agent is driving means a person
// is using it; the service worker passes that to the host, which pauses the threads driving the
// tab. The same watcher runs in the top frame (as part of the page executor) and in every other
// frame the extension may script (injected on its own), since a frame's events never reach its
// parent. Our own synthetic events are never trusted; the worker filters the debugger's trusted
// input itself.
(() => {
  // The guard lives in this isolated world, where the page cannot pre-set it.
  const KEY = Symbol.for("tabwarden.takeoverWatch");
  if (window[KEY]) return;
  try {
    Object.defineProperty(window, KEY, { value: true });
  } catch (_) {
    return;
  }
  const REPORT_GAP_MS = 1000;
  const CONTENT = globalThis.__tabwardenContent; // injected right before this file, here as in the executor
  const { TYPES } = CONTENT;
  let lastReport = 0;

  function tell(type, fields) {
    const message = CONTENT.message(type, fields);
    try {
      chrome.runtime.sendMessage(message).catch(() => {});
    } catch (_) {
      // the extension was reloaded: nobody to tell
    }
  }

  function report(event) {
    if (!event.isTrusted) return;
    const TW = globalThis.__tabwarden; // the executor, where it runs (the top frame)
    if (TW && TW.isOverlayNode(event.target)) return; // our own indicator is not the page
    const now = Date.now();
    if (now - lastReport < REPORT_GAP_MS) return;
    lastReport = now;
    // The worker takes the tab, frame and URL from the sender.
    tell(TYPES.TAKEOVER_MANUAL_INPUT, { kind: event.type, duringAgentRequest: !!(TW && TW.state.activeRequests > 0) });
  }

  window.addEventListener("mousedown", report, { capture: true, passive: true });
  window.addEventListener("keydown", report, { capture: true, passive: true });
  // A frame (re)loaded: its new document needs the watcher. Load does not bubble and never reaches
  // the window, but the document sees it while capturing.
  document.addEventListener("load", (event) => {
    const tag = event.target && event.target.tagName;
    if (tag === "IFRAME" || tag === "FRAME") tell(TYPES.TAKEOVER_FRAME_LOADED);
  }, { capture: true, passive: true });
})();
